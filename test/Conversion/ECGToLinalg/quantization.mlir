// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR survives canonicalization and bufferization (a splat zero point folds
// into the body as a scalar constant: it must be signless by then).
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

// Quantizing to uint8: one generic dividing by the per-row scale, rounding half to
// even, adding the zero point (converted as unsigned: 200, not -56), saturating in
// f32 and converting as unsigned. The unsigned types become signless; the function
// keeps the signature it declared.
// CHECK-LABEL: func.func @quantize_uint8
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> tensor<2x3xi8> attributes {dnnf.declared_type = (tensor<2x3xf32>) -> tensor<2x3xui8>}
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<-56> : tensor<i8>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %[[ZERO]] : tensor<2x3xf32>, tensor<2x1xf32>, tensor<i8>) outs(%{{.*}} : tensor<2x3xi8>)
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: %[[R:.*]] = math.roundeven %[[Q]]
// CHECK: %[[Z:.*]] = arith.uitofp %{{.*}} : i8 to f32
// CHECK: arith.addf %[[R]], %[[Z]]
// CHECK: arith.constant 0.0
// CHECK: arith.constant 2.550000e+02
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK-NOT: unrealized_conversion_cast
func.func @quantize_uint8(%x: tensor<2x3xf32>) -> tensor<2x3xui8> {
  %s = "ecg.constant"() {value = dense<[[0.5], [0.25]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %z = "ecg.constant"() {value = dense<200> : tensor<ui8>} : () -> tensor<ui8>
  %0 = "ecg.quantize_linear"(%x, %s, %z) : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// Dequantizing uint8: both zero-extended to i32, subtracted, converted, scaled.
// CHECK-LABEL: func.func @dequantize_uint8
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<i8>) -> tensor<4xf32> attributes {dnnf.declared_type
// CHECK: ^bb0(%[[IN:.*]]: i8, %[[SCALE:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[A:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK: %[[B:.*]] = arith.extui %[[ZP]] : i8 to i32
// CHECK: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK: arith.mulf %[[F]], %[[SCALE]] : f32
func.func @dequantize_uint8(%x: tensor<4xui8>, %z: tensor<ui8>) -> tensor<4xf32> {
  %s = "ecg.constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %0 = "ecg.dequantize_linear"(%x, %s, %z) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// int32 results saturate in f64, where the limits are exact (-2**31, 2**31 - 1).
// CHECK-LABEL: func.func @quantize_int32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.constant 0xC1E0000000000000 : f64
// CHECK: arith.constant 0x41DFFFFFFFC00000 : f64
// CHECK: arith.fptosi %{{.*}} : f64 to i32
func.func @quantize_int32(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<4xi32> {
  %0 = "ecg.quantize_linear"(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
