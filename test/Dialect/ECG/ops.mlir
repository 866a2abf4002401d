// RUN: dnnf-opt %s --split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same text.
// RUN: dnnf-opt %s --split-input-file | dnnf-opt --split-input-file | FileCheck %s
// Printing is a fixed point: print -> parse -> print is byte-identical.
// RUN: dnnf-opt %s --split-input-file -o %t && dnnf-opt %t --split-input-file | diff %t -

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: "ecg.add"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = "ecg.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "ecg.gelu"(%{{.*}}) {approximate = "tanh"}
  %1 = "ecg.gelu"(%0) {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "ecg.less"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = "ecg.less"(%1, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: "ecg.where"
  %3 = "ecg.where"(%2, %1, %0) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @integer_elementwise
func.func @integer_elementwise(%a: tensor<2x3xi32>, %x: tensor<2x3xui8>, %y: tensor<3xui8>) -> (tensor<2x3xi32>, tensor<2x3xui8>) {
  // CHECK: "ecg.square"(%{{.*}}) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %0 = "ecg.square"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: "ecg.bit_shift"(%{{.*}}, %{{.*}}) {direction = "RIGHT"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  %1 = "ecg.bit_shift"(%x, %y) {direction = "RIGHT"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  return %0, %1 : tensor<2x3xi32>, tensor<2x3xui8>
}

// -----

// CHECK-LABEL: func.func @conv_relu_pool
func.func @conv_relu_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: "ecg.constant"() {value = dense<2.000000e-02> : tensor<4x3x3x3xf32>}
  %w = "ecg.constant"() {value = dense<0.02> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  // CHECK: "ecg.conv"(%{{.*}}, %{{.*}}) {{.*}}pads = array<i64: 1, 1, 1, 1>{{.*}} -> tensor<1x4x8x8xf32>
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = "ecg.relu"(%0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: "ecg.max_pool"
  %2 = "ecg.max_pool"(%1) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  // CHECK: "ecg.transpose"(%{{.*}}) {perm = array<i64: 2, 0, 1>}
  %0 = "ecg.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: "ecg.reshape"(%{{.*}}) {shape = array<i64: 4, 6>}
  %1 = "ecg.reshape"(%0) {shape = array<i64: 4, 6>} : (tensor<4x2x3xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @fused_block
func.func @fused_block(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: "ecg.fused"(%{{.*}}, %{{.*}}) ({
  // CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
  // CHECK-NEXT: %[[S:.*]] = "ecg.add"(%[[X]], %[[Y]])
  // CHECK-NEXT: %[[R:.*]] = "ecg.relu"(%[[S]])
  // CHECK-NEXT: "ecg.yield"(%[[R]])
  // CHECK: mapping = "One-to-One"
  %0 = "ecg.fused"(%a, %b) ({
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = "ecg.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %r = "ecg.relu"(%s) : (tensor<4xf32>) -> tensor<4xf32>
    "ecg.yield"(%r) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {mapping = "One-to-One", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Inputs and outputs of a fusion block may have different types.
// CHECK-LABEL: func.func @fused_mixed_types
func.func @fused_mixed_types(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  // CHECK: "ecg.fused"(%{{.*}}, %{{.*}}) ({
  // CHECK: }) {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>)
  %0:2 = "ecg.fused"(%a, %b) ({
  ^bb0(%x: tensor<2x3xf32>, %y: tensor<3xf32>):
    %s = "ecg.add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %t = "ecg.transpose"(%s) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    "ecg.yield"(%s, %t) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> ()
  }) {mapping = "Shuffle", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<3x2xf32>
}
