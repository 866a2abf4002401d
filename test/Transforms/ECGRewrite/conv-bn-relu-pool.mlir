// Conv -> BatchNormalization -> Relu -> MaxPool, the stem of the CNNs: the
// normalization folds into the convolution's weights and bias, and the Relu moves
// below the pool (max commutes with monotone functions), where it sees a quarter of
// the elements. (This graph once crashed the rewriter: a folded weight's op was
// looked up after it had been erased.)
// RUN: dnnf-opt %s --ecg-rewrite=stats-file=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t.json

// CHECK-LABEL: func.func @stem
// CHECK-DAG:     %[[W:.*]] = "ecg.constant"() {value = {{.*}}} : () -> tensor<4x3x3x3xf32>
// CHECK-DAG:     %[[B:.*]] = "ecg.constant"() {value = {{.*}}} : () -> tensor<4xf32>
// CHECK:         %[[C:.*]] = "ecg.conv"(%arg0, %[[W]], %[[B]])
// CHECK-NEXT:    %[[P:.*]] = "ecg.max_pool"(%[[C]])
// CHECK-NEXT:    %[[R:.*]] = "ecg.relu"(%[[P]]) : (tensor<1x4x8x8xf32>)
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     "ecg.batch_normalization"
// STATS:      "ops_before": 4,
// STATS-NEXT: "ops_after": 3,
// STATS:      "conv-batch_normalization": 1,
// STATS-NEXT: "max_pool-relu": 1
func.func @stem(%x: tensor<1x3x16x16xf32>) -> tensor<1x4x8x8xf32> {
  %w = "ecg.constant"() {value = dense<0.25> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x16x16xf32>
  %scale = "ecg.constant"() {value = dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %shift = "ecg.constant"() {value = dense<[0.0, 0.1, -0.2, 0.3]> : tensor<4xf32>} : () -> tensor<4xf32>
  %mean = "ecg.constant"() {value = dense<[0.5, -0.5, 0.0, 1.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %var = "ecg.constant"() {value = dense<[1.0, 4.0, 0.25, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %1 = "ecg.batch_normalization"(%0, %scale, %shift, %mean, %var) {epsilon = 1.000000e-05 : f64} : (tensor<1x4x16x16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x16x16xf32>
  %2 = "ecg.relu"(%1) : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %3 = "ecg.max_pool"(%2) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x16x16xf32>) -> tensor<1x4x8x8xf32>
  return %3 : tensor<1x4x8x8xf32>
}
