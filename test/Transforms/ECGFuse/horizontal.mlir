// Horizontal fusion (ecg-fuse's dnnf mode, after Listing 1): sibling contractions of
// one input with constant weights become one contraction over the concatenated
// weights, sliced back into the branches, in one block with the branches' blocks.
// RUN: dnnf-opt %s --split-input-file --ecg-fuse | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=horizontal=false | FileCheck %s --check-prefix=OFF
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=mode=tvm | FileCheck %s --check-prefix=OFF
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=target=vulkan | FileCheck %s --check-prefix=GPU
// RUN: dnnf-opt %s --split-input-file '--ecg-fuse=target=vulkan stats-file=-' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// Query, key and value projections, each reshaped and transposed to its heads. On a
// Vulkan target one [8, 24] matmul, three slices, each head's reshape and transpose in
// the same block; the three results are its outputs. For a CPU (the default target), which
// computes a merged product slice by slice anyway, each projection stays a block with
// its own heads' layout (``Target.merges_laid_out_projections``).
// GPU-LABEL:   func.func @qkv
// GPU:           %[[W:.*]] = "ecg.constant"() {value = dense{{.*}} : tensor<8x24xf32>}
// GPU:           %[[F:.*]]:3 = "ecg.fused"(%arg0, %[[W]]) ({
// GPU:             %[[M:.*]] = "ecg.mat_mul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
// GPU-NEXT:        "ecg.slice"(%[[M]]) {axes = array<i64: 1>, ends = array<i64: 8>, starts = array<i64: 0>, steps = array<i64: 1>}
// GPU-NEXT:        "ecg.slice"(%[[M]]) {axes = array<i64: 1>, ends = array<i64: 16>, starts = array<i64: 8>, steps = array<i64: 1>}
// GPU-NEXT:        "ecg.slice"(%[[M]]) {axes = array<i64: 1>, ends = array<i64: 24>, starts = array<i64: 16>, steps = array<i64: 1>}
// GPU-NOT:         "ecg.mat_mul"
// GPU:             "ecg.yield"
// GPU-NEXT:      }) {dnnf.ir_removable = {{.*}}, mapping = "Many-to-Many"
// GPU-NOT:       "ecg.mat_mul"
// GPU:           return %[[F]]#0, %[[F]]#1, %[[F]]#2
// CHECK-LABEL: func.func @qkv
// CHECK-NOT:     "ecg.slice"
// CHECK-COUNT-3: "ecg.mat_mul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT:     "ecg.slice"
// CHECK:         return
// OFF-LABEL:   func.func @qkv
// OFF-COUNT-3:   "ecg.mat_mul"
// OFF-NOT:       "ecg.slice"
// STATS:         "horizontal": {
// STATS-NEXT:      "groups": 1,
// STATS-NEXT:      "contractions": 3
func.func @qkv(%x: tensor<4x8xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %wq = "ecg.constant"() {value = dense<0.25> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %wk = "ecg.constant"() {value = dense<0.5> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %wv = "ecg.constant"() {value = dense<0.75> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %q = "ecg.mat_mul"(%x, %wq) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %q1 = "ecg.reshape"(%q) {shape = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %q2 = "ecg.transpose"(%q1) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %k = "ecg.mat_mul"(%x, %wk) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k1 = "ecg.reshape"(%k) {shape = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %k2 = "ecg.transpose"(%k1) {perm = array<i64: 1, 2, 0>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  %v = "ecg.mat_mul"(%x, %wv) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %v1 = "ecg.reshape"(%v) {shape = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %v2 = "ecg.transpose"(%v1) {perm = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
  return %q2, %k2, %v2 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
}

// -----

// An Inception module's 1x1 convolutions, each with its bias and a ReLU: one
// convolution of 2 + 3 filters (the biases joined), one ReLU before the slices.
// CHECK-LABEL: func.func @inception_1x1
// CHECK:         "ecg.fused"
// CHECK-DAG:       "ecg.constant"() {value = dense<{{.*}}> : tensor<5x4x1x1xf32>}
// CHECK-DAG:       "ecg.constant"() {value = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<5xf32>}
// CHECK:           %[[C:.*]] = "ecg.conv"({{.*}}) -> tensor<1x5x6x6xf32>
// CHECK-NEXT:      %[[R:.*]] = "ecg.relu"(%[[C]]) : (tensor<1x5x6x6xf32>) -> tensor<1x5x6x6xf32>
// CHECK-NEXT:      "ecg.slice"(%[[R]]) {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 0>
// CHECK-NEXT:      "ecg.slice"(%[[R]]) {axes = array<i64: 1>, ends = array<i64: 5>, starts = array<i64: 2>
// CHECK-NOT:       "ecg.relu"
// CHECK:           "ecg.yield"
// OFF-LABEL:   func.func @inception_1x1
// OFF-COUNT-2:   "ecg.conv"
func.func @inception_1x1(%x: tensor<1x4x6x6xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x3x6x6xf32>) {
  %w1 = "ecg.constant"() {value = dense<0.5> : tensor<2x4x1x1xf32>} : () -> tensor<2x4x1x1xf32>
  %b1 = "ecg.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %w2 = "ecg.constant"() {value = dense<0.25> : tensor<3x4x1x1xf32>} : () -> tensor<3x4x1x1xf32>
  %b2 = "ecg.constant"() {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "ecg.conv"(%x, %w1, %b1) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
  %1 = "ecg.relu"(%0) : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %2 = "ecg.conv"(%x, %w2, %b2) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<3x4x1x1xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32>
  %3 = "ecg.relu"(%2) : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  return %1, %3 : tensor<1x2x6x6xf32>, tensor<1x3x6x6xf32>
}

// -----

// Siblings that do not merge: different strides; weights that are computed; a
// block that reads another computed value (the residual add is the matmul's
// epilogue, which a merge would have to write out).
// CHECK-LABEL: func.func @not_siblings
// CHECK-NOT:     "ecg.slice"
// CHECK-COUNT-2: "ecg.conv"
// CHECK-COUNT-3: "ecg.mat_mul"
// CHECK-NOT:     "ecg.slice"
// CHECK:         return
func.func @not_siblings(%x: tensor<1x4x6x6xf32>, %m: tensor<4x8xf32>, %w: tensor<8x8xf32>, %r: tensor<4x8xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x2x3x3xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %w1 = "ecg.constant"() {value = dense<0.5> : tensor<2x4x1x1xf32>} : () -> tensor<2x4x1x1xf32>
  %0 = "ecg.conv"(%x, %w1) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
  %1 = "ecg.conv"(%x, %w1) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x3x3xf32>
  %wc = "ecg.constant"() {value = dense<0.5> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %2 = "ecg.mat_mul"(%m, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = "ecg.mat_mul"(%m, %wc) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = "ecg.mat_mul"(%m, %wc) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %5 = "ecg.add"(%4, %r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3, %5 : tensor<1x2x6x6xf32>, tensor<1x2x3x3xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Layers that share their weights (ALBERT) share the concatenated weights too.
// CHECK-LABEL: func.func @shared_weights
// CHECK-COUNT-1: "ecg.constant"() {value = dense{{.*}} : tensor<8x16xf32>}
// CHECK-NOT:     "ecg.constant"
// CHECK:         return
func.func @shared_weights(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %wq = "ecg.constant"() {value = dense<0.25> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %wk = "ecg.constant"() {value = dense<0.5> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %0 = "ecg.mat_mul"(%x, %wq) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "ecg.mat_mul"(%x, %wk) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = "ecg.mat_mul"(%y, %wq) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = "ecg.mat_mul"(%y, %wk) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
