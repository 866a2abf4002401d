// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR survives canonicalization and bufferization.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

// A 1-d convolution is a 2-d one of height 1: reshapes around the named op.
// CHECK-LABEL: func.func @conv1d_grouped
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [1, 6, 1, 12] : tensor<1x6x12xf32> into tensor<1x6x1x12xf32>
// CHECK: %[[W:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1], [2, 3]] output_shape [9, 2, 1, 3] : tensor<9x2x3xf32> into tensor<9x2x1x3xf32>
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x3x2x1x12xf32>, tensor<3x3x2x1x3xf32>) outs(%{{.*}} : tensor<1x3x3x1x8xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x9x1x8xf32> into tensor<1x9x8xf32>
func.func @conv1d_grouped(%x: tensor<1x6x11xf32>, %w: tensor<9x2x3xf32>) -> tensor<1x9x8xf32> {
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 2>, group = 3 : i64, kernel_shape = array<i64: 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 1, 0>, strides = array<i64: 1>} : (tensor<1x6x11xf32>, tensor<9x2x3xf32>) -> tensor<1x9x8xf32>
  return %0 : tensor<1x9x8xf32>
}

// -----

// A 3-d convolution: the depth's output positions into the batch, its taps into
// the channels of each group (one slice of the input per tap, stacked and
// transposed), one 2-d grouped convolution, the result transposed back.
// CHECK-LABEL: func.func @conv3d_grouped
// CHECK: %[[T0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 4, 2, 6, 7] [1, 1, 2, 1, 1] : tensor<1x4x5x6x7xf32> to tensor<1x4x2x6x7xf32>
// CHECK: %[[T1:.*]] = tensor.extract_slice %{{.*}}[0, 0, 1, 0, 0] [1, 4, 2, 6, 7] [1, 1, 2, 1, 1]
// CHECK: %[[T2:.*]] = tensor.extract_slice %{{.*}}[0, 0, 2, 0, 0] [1, 4, 2, 6, 7] [1, 1, 2, 1, 1]
// CHECK: %[[STACK:.*]] = tensor.concat dim(2) %{{.*}}, %{{.*}}, %{{.*}} : ({{.*}}) -> tensor<1x2x3x2x2x6x7xf32>
// CHECK: linalg.transpose ins(%[[STACK]] : tensor<1x2x3x2x2x6x7xf32>) outs(%{{.*}} : tensor<1x2x2x3x2x6x7xf32>) permutation = [0, 4, 1, 2, 3, 5, 6]
// CHECK: linalg.transpose ins(%arg1 : tensor<6x2x3x2x3xf32>) outs(%{{.*}} : tensor<6x3x2x2x3xf32>) permutation = [0, 2, 1, 3, 4]
// CHECK: linalg.conv_2d_ngchw_gfchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x2x6x6x7xf32>, tensor<2x3x6x2x3xf32>) outs(%{{.*}} : tensor<2x2x3x5x5xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x2x6x5x5xf32>) outs(%{{.*}} : tensor<1x6x2x5x5xf32>) permutation = [0, 2, 1, 3, 4]
func.func @conv3d_grouped(%x: tensor<1x4x5x6x7xf32>, %w: tensor<6x2x3x2x3xf32>) -> tensor<1x6x2x5x5xf32> {
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1, 1>, group = 2 : i64, kernel_shape = array<i64: 3, 2, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 2, 1, 1>} : (tensor<1x4x5x6x7xf32>, tensor<6x2x3x2x3xf32>) -> tensor<1x6x2x5x5xf32>
  return %0 : tensor<1x6x2x5x5xf32>
}

// -----

// A depthwise 3-d convolution of depth stride 1: the depth slices read as one image
// of D * H rows, one depthwise 2-d convolution per depth tap (its rows 2 * 6 further
// down: dilation 2), accumulated; the output's slices 6 / 2 rows apart, of which the
// first 2 are kept, the bias their start. No transpose, no copy of the input, no add.
// CHECK-LABEL: func.func @conv3d_depthwise
// CHECK: %[[IMAGE:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3], [4]] : tensor<1x2x4x6x7xf32> into tensor<1x2x24x7xf32>
// CHECK: %[[STACKED:.*]] = linalg.broadcast ins(%{{.*}} : tensor<2xf32>) outs(%{{.*}} : tensor<1x2x6x5xf32>) dimensions = [0, 2, 3]
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[STACKED]][0, 0, 0, 0] [1, 2, 5, 5] [1, 1, 1, 1]
// CHECK: %[[TAP0:.*]] = tensor.extract_slice %[[IMAGE]][0, 0, 0, 0] [1, 2, 11, 7] [1, 1, 1, 1]
// CHECK: %[[Y0:.*]] = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[TAP0]], %{{.*}} : tensor<1x2x11x7xf32>, tensor<2x3x3xf32>) outs(%[[ROWS]] : tensor<1x2x5x5xf32>)
// CHECK: %[[TAP1:.*]] = tensor.extract_slice %[[IMAGE]][0, 0, 12, 0] [1, 2, 11, 7] [1, 1, 1, 1]
// CHECK: %[[Y1:.*]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[TAP1]], %{{.*}} : tensor<1x2x11x7xf32>, tensor<2x3x3xf32>) outs(%[[Y0]] : tensor<1x2x5x5xf32>)
// CHECK: %[[ALL:.*]] = tensor.insert_slice %[[Y1]] into %[[STACKED]][0, 0, 0, 0] [1, 2, 5, 5] [1, 1, 1, 1]
// CHECK: %[[SLICES:.*]] = tensor.expand_shape %[[ALL]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 2, 2, 3, 5]
// CHECK: tensor.extract_slice %[[SLICES]][0, 0, 0, 0, 0] [1, 2, 2, 2, 5] [1, 1, 1, 1, 1] : tensor<1x2x2x3x5xf32> to tensor<1x2x2x2x5xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
func.func @conv3d_depthwise(%x: tensor<1x2x4x6x7xf32>, %w: tensor<2x1x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2x5xf32> {
  %0 = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 2, 1, 1>, group = 2 : i64, kernel_shape = array<i64: 2, 3, 3>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 2, 1>} : (tensor<1x2x4x6x7xf32>, tensor<2x1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2x5xf32>
  return %0 : tensor<1x2x2x2x5xf32>
}

// -----

// A depth and a height with unit windows and strides are one axis: a 1x1x1
// convolution is a 2-d 1x1 one, no copy.
// CHECK-LABEL: func.func @conv3d_pointwise
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3], [4]] : tensor<1x6x3x4x5xf32> into tensor<1x6x12x5xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} outs(%{{.*}} : tensor<1x8x12x5xf32>)
// CHECK-NOT: linalg.transpose
func.func @conv3d_pointwise(%x: tensor<1x6x3x4x5xf32>, %w: tensor<8x6x1x1x1xf32>) -> tensor<1x8x3x4x5xf32> {
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x6x3x4x5xf32>, tensor<8x6x1x1x1xf32>) -> tensor<1x8x3x4x5xf32>
  return %0 : tensor<1x8x3x4x5xf32>
}
