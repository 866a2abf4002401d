// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR survives canonicalization and bufferization.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

// Signed operands: one generic, broadcasting the second operand, with arith.andi.
// CHECK-LABEL: func.func @and_broadcast
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<2x3xi32>, tensor<3xi32>)
// CHECK: arith.andi
func.func @and_broadcast(%a: tensor<2x3xi32>, %b: tensor<3xi32>) -> tensor<2x3xi32> {
  %0 = "ecg.bitwise_and"(%a, %b) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Unsigned operands are xor-ed as signless ones: the lowering ends with every unsigned
// type signless, the function keeping its declared signature.
// CHECK-LABEL: func.func @xor_unsigned
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> tensor<4xi8>
// CHECK-SAME: dnnf.declared_type = (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: i8, %[[Y:.*]]: i8, %{{.*}}: i8):
// CHECK: arith.xori %[[X]], %[[Y]] : i8
func.func @xor_unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "ecg.bitwise_xor"(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Not is a xor with all ones.
// CHECK-LABEL: func.func @not
// CHECK: %[[ONES:.*]] = arith.constant -1 : i16
// CHECK: arith.xori %{{.*}}, %[[ONES]] : i16
func.func @not(%a: tensor<5xi16>) -> tensor<5xi16> {
  %0 = "ecg.bitwise_not"(%a) : (tensor<5xi16>) -> tensor<5xi16>
  return %0 : tensor<5xi16>
}

// -----

// The trigonometric and hyperbolic functions are math dialect ops.
// CHECK-LABEL: func.func @trigonometric
// CHECK: math.tan
// CHECK: math.acos
// CHECK: math.atanh
func.func @trigonometric(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = "ecg.tan"(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "ecg.acos"(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "ecg.atanh"(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

