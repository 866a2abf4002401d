// One case per Table 3 class (DESIGN.md section 5) under ecg-fuse's default planner
// (mode=dnnf, the conservative oracle for Y cells).
// RUN: dnnf-opt %s --split-input-file --ecg-fuse | FileCheck %s

// G: MatMul -> Add (bias) -> Relu, seeded at the Relu/Add, grows to the MatMul
// (Many-to-Many -> One-to-One is G); the block is Many-to-Many, nothing is materialised
// but its result.
// CHECK-LABEL: func.func @g_epilogue
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16xf32>):
// CHECK-NEXT:      %[[M:.*]] = "ecg.mat_mul"(%[[X]], %[[W]])
// CHECK-NEXT:      %[[A:.*]] = "ecg.add"(%[[M]], %[[B]])
// CHECK-NEXT:      %[[R:.*]] = "ecg.relu"(%[[A]])
// CHECK-NEXT:      "ecg.yield"(%[[R]])
// CHECK-NEXT:    }) {dnnf.ir_removable = array<i1: true, true, false>, mapping = "Many-to-Many"
// CHECK-NEXT:    return %[[F]]
func.func @g_epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = "ecg.mat_mul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "ecg.relu"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Y accepted: Many-to-Many -> Reorganize. The Add seeds a block that takes the Reshape
// and the Transpose (G), then the MatMul before it: Many-to-Many -> Reorganize is Y and
// the conservative oracle accepts it (the reshape only re-indexes the stores).
// A small constant (the bias: fewer than 64 elements) is cloned into the body.
// CHECK-LABEL: func.func @y_accepted
// CHECK:         "ecg.fused"(%arg0, %arg1) ({
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8x16xf32>):
// CHECK-NEXT:      "ecg.constant"() {value = dense<5.000000e-01> : tensor<16xf32>}
// CHECK-NEXT:      "ecg.mat_mul"
// CHECK-NEXT:      "ecg.add"
// CHECK-NEXT:      "ecg.reshape"
// CHECK-NEXT:      "ecg.transpose"
// CHECK-NEXT:      "ecg.yield"
// CHECK-NEXT:    }) {dnnf.ir_removable = array<i1: true, true, true, false>, mapping = "Many-to-Many"
// CHECK-NOT:     "ecg.constant"
func.func @y_accepted(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x4x8xf32> {
  %b = "ecg.constant"() {value = dense<0.5> : tensor<16xf32>} : () -> tensor<16xf32>
  %0 = "ecg.mat_mul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "ecg.reshape"(%1) {allowzero = 0 : i64, shape = array<i64: 4, 2, 8>} : (tensor<4x16xf32>) -> tensor<4x2x8xf32>
  %3 = "ecg.transpose"(%2) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x8xf32>) -> tensor<2x4x8xf32>
  return %3 : tensor<2x4x8xf32>
}

// -----

// Y rejected: Many-to-Many -> One-to-Many. The Add and the Expand fuse (One-to-One ->
// One-to-Many is G); the MatMul before them would make a Y cell with a One-to-Many
// side, which the conservative oracle leaves to a profile.
// CHECK-LABEL: func.func @y_rejected
// CHECK:         %[[M:.*]] = "ecg.mat_mul"(%arg0, %arg1)
// CHECK-NEXT:    "ecg.fused"(%[[M]], %arg2) ({
// CHECK:           "ecg.add"
// CHECK-NEXT:      "ecg.expand"
// CHECK:         }) {dnnf.ir_removable = array<i1: true, false>, mapping = "One-to-Many"
func.func @y_rejected(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<3x4x16xf32> {
  %0 = "ecg.mat_mul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "ecg.expand"(%1) {shape = array<i64: 3, 4, 16>} : (tensor<4x16xf32>) -> tensor<3x4x16xf32>
  return %2 : tensor<3x4x16xf32>
}

// -----

// R: Conv -> Relu -> Conv. The Relu fuses with the Conv before it (the epilogue); the
// second Conv is Many-to-Many after a Many-to-Many block (R), and a contraction never
// takes the producer of its operand into its block either.
// CHECK-LABEL: func.func @r_conv_conv
// CHECK:         %[[F:.*]] = "ecg.fused"
// CHECK:           "ecg.conv"
// CHECK-NEXT:      "ecg.relu"
// CHECK:         mapping = "Many-to-Many"
// CHECK-NEXT:    %[[C:.*]] = "ecg.conv"(%[[F]], %arg2)
// CHECK-NEXT:    return %[[C]]
func.func @r_conv_conv(%x: tensor<1x2x6x6xf32>, %w1: tensor<2x2x3x3xf32>, %w2: tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "ecg.conv"(%x, %w1) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = "ecg.relu"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = "ecg.conv"(%1, %w2) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  return %2 : tensor<1x2x2x2xf32>
}

// -----

// R: MatMul -> MatMul, no One-to-One op to seed from: nothing changes.
// CHECK-LABEL: func.func @r_matmul_matmul
// CHECK-NEXT:    "ecg.mat_mul"(%arg0, %arg1)
// CHECK-NEXT:    "ecg.mat_mul"
// CHECK-NOT:     "ecg.fused"
func.func @r_matmul_matmul(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "ecg.mat_mul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "ecg.mat_mul"(%0, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// R: One-to-Many -> Many-to-Many. Relu -> Expand fuse (G, a One-to-Many block); the
// Softmax after it would read replicated data (R) and stays out.
// CHECK-LABEL: func.func @r_expand_softmax
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0)
// CHECK:           "ecg.relu"
// CHECK-NEXT:      "ecg.expand"
// CHECK:         mapping = "One-to-Many"
// CHECK-NEXT:    "ecg.softmax"(%[[F]])
func.func @r_expand_softmax(%x: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = "ecg.relu"(%x) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %1 = "ecg.expand"(%0) {shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "ecg.softmax"(%1) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
