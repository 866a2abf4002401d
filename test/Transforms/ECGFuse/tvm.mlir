// mode=tvm: TVM's FuseOps over its op kinds and the post-dominator tree.
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=mode=tvm | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=mode=none | FileCheck %s --check-prefix=NONE

// NONE-NOT: "ecg.fused"

// A complex-out-fusable op (Conv) takes its elementwise epilogue: bias Add and Relu.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK:         "ecg.fused"(%arg0, %arg1, %arg2) ({
// CHECK:           "ecg.conv"
// CHECK-NEXT:      "ecg.add"
// CHECK-NEXT:      "ecg.relu"
// CHECK-NEXT:      "ecg.yield"
// CHECK:         mapping = "Many-to-Many"
func.func @conv_epilogue(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = "ecg.relu"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// A MatMul does not take an injective consumer (the edge to its post-dominator is not
// elementwise), where the dnnf planner fuses it (Many-to-Many -> Reorganize, Y); the
// injective Reshape and Transpose fuse with each other, in TVM's second phase.
// CHECK-LABEL: func.func @matmul_reshape
// CHECK:         %[[M:.*]] = "ecg.mat_mul"(%arg0, %arg1)
// CHECK-NEXT:    "ecg.fused"(%[[M]]) ({
// CHECK:           "ecg.reshape"
// CHECK-NEXT:      "ecg.transpose"
// CHECK:         mapping = "Reorganize"
func.func @matmul_reshape(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x4x8xf32> {
  %0 = "ecg.mat_mul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "ecg.reshape"(%0) {allowzero = 0 : i64, shape = array<i64: 4, 2, 8>} : (tensor<4x16xf32>) -> tensor<4x2x8xf32>
  %2 = "ecg.transpose"(%1) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x8xf32>) -> tensor<2x4x8xf32>
  return %2 : tensor<2x4x8xf32>
}

// -----

// Elementwise ops fuse into a reduction after them; the reduction takes no consumer.
// CHECK-LABEL: func.func @into_reduction
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0) ({
// CHECK:           "ecg.exp"
// CHECK-NEXT:      "ecg.reduce_sum"
// CHECK:         mapping = "Many-to-Many"
// CHECK-NEXT:    "ecg.sqrt"(%[[F]])
func.func @into_reduction(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = "ecg.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ecg.reduce_sum"(%0) {axes = array<i64: 1>, keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = "ecg.sqrt"(%1) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  return %2 : tensor<4x1xf32>
}
