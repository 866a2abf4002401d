// A LRN read by a pooling only joins the pooling's block on the GPU profile that
// computes it again in the pooling's windows (lavapipe: GpuDevice.lrn_in_pools);
// Table 3's red cell keeps them apart on the host, PoCL and the generic profiles.
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=target=vulkan,device=lavapipe | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=target=opencl,device=pocl | FileCheck %s --check-prefix=APART
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=target=vulkan | FileCheck %s --check-prefix=APART
// RUN: dnnf-opt %s --split-input-file --ecg-fuse | FileCheck %s --check-prefix=APART

// CHECK-LABEL: func.func @relu_lrn_pool
// CHECK:         %[[C:.*]] = "ecg.conv"
// CHECK:         "ecg.fused"(%[[C]]) ({
// CHECK:           "ecg.relu"
// CHECK:           "ecg.lrn"
// CHECK:           "ecg.max_pool"
// CHECK:         }) {{.*}}mapping = "Many-to-Many"
// CHECK-NOT:     "ecg.max_pool"
// APART-LABEL: func.func @relu_lrn_pool
// APART:         "ecg.fused"
// APART:           "ecg.lrn"
// APART:           "ecg.yield"
// APART:         "ecg.max_pool"
func.func @relu_lrn_pool(%x: tensor<1x3x9x9xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %c = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x9x9xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x7x7xf32>
  %r = "ecg.relu"(%c) : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %l = "ecg.lrn"(%r) {alpha = 1.0e-4 : f64, beta = 7.5e-01 : f64, bias = 1.0 : f64, size = 5 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %p = "ecg.max_pool"(%l) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x3x3xf32>
  return %p : tensor<1x8x3x3xf32>
}

// -----

// The LRN's result is also returned: it is written out anyway, the pooling reads it.
// CHECK-LABEL: func.func @lrn_also_returned
// CHECK:         %[[L:.*]] = "ecg.lrn"
// CHECK:         "ecg.max_pool"(%[[L]])
// APART-LABEL: func.func @lrn_also_returned
// APART:         %[[L:.*]] = "ecg.lrn"
// APART:         "ecg.max_pool"(%[[L]])
func.func @lrn_also_returned(%x: tensor<1x8x7x7xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x8x3x3xf32>) {
  %l = "ecg.lrn"(%x) {alpha = 1.0e-4 : f64, beta = 7.5e-01 : f64, bias = 1.0 : f64, size = 3 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %p = "ecg.max_pool"(%l) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x3x3xf32>
  return %l, %p : tensor<1x8x7x7xf32>, tensor<1x8x3x3xf32>
}

// -----

// A LRN read by a convolution stays apart from it (its tiles would be computed again).
// CHECK-LABEL: func.func @lrn_then_conv
// CHECK:         %[[L:.*]] = "ecg.lrn"
// CHECK:         "ecg.conv"(%[[L]]
// APART-LABEL: func.func @lrn_then_conv
func.func @lrn_then_conv(%x: tensor<1x8x7x7xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x7x7xf32> {
  %l = "ecg.lrn"(%x) {alpha = 1.0e-4 : f64, beta = 7.5e-01 : f64, bias = 1.0 : f64, size = 3 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %c = "ecg.conv"(%l, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x7x7xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x7x7xf32>
  return %c : tensor<1x4x7x7xf32>
}

// -----

// A padded pooling would gather from the LRN computed first (a dispatch of its own):
// apart everywhere.
// CHECK-LABEL: func.func @lrn_padded_pool
// CHECK:         %[[L:.*]] = "ecg.lrn"
// CHECK:         "ecg.max_pool"(%[[L]])
// APART-LABEL: func.func @lrn_padded_pool
func.func @lrn_padded_pool(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32> {
  %l = "ecg.lrn"(%x) {alpha = 1.0e-4 : f64, beta = 7.5e-01 : f64, bias = 1.0 : f64, size = 3 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %p = "ecg.max_pool"(%l) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, storage_order = 0 : i64, strides = array<i64: 2, 2>} : (tensor<1x8x7x7xf32>) -> tensor<1x8x4x4xf32>
  return %p : tensor<1x8x4x4xf32>
}
