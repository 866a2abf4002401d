// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR survives canonicalization and bufferization.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

// Stride 2, a 2x2 kernel: four phases of one tap each, 1x1 convolutions of the
// input with the weights' channels swapped (no reversal), stacked and interleaved
// by one gather over the output, the bias added after it.
// CHECK-LABEL: func.func @upsample_2x2
// CHECK: %[[W:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x4x3x2x2xf32>) outs(%{{.*}} : tensor<1x3x4x2x2xf32>) permutation = [0, 2, 1, 3, 4]
// CHECK: %[[TAP:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [3, 4, 1, 1] [1, 1, 1, 1] : tensor<3x4x2x2xf32> to tensor<3x4x1x1xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg0, %[[TAP]] : tensor<1x4x5x6xf32>, tensor<3x4x1x1xf32>) outs(%{{.*}} : tensor<1x3x5x6xf32>)
// CHECK-COUNT-3: linalg.conv_2d_nchw_fchw
// CHECK: %[[STACK:.*]] = tensor.concat dim(0) {{.*}} -> tensor<4x1x3x5x6xf32>
// CHECK-DAG: arith.constant dense<[0, 180, 6, 186, 12, 192, 18, 198, 24, 204]> : tensor<10xi32>
// CHECK-DAG: arith.constant dense<[0, 90, 1, 91, 2, 92, 3, 93, 4, 94, 5, 95]> : tensor<12xi32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[STACK]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x10x12xf32>)
// CHECK: tensor.extract %[[FLAT]]
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @upsample_2x2(%x: tensor<1x4x5x6xf32>, %w: tensor<4x3x2x2xf32>, %b: tensor<3xf32>) -> tensor<1x3x10x12xf32> {
  %0 = "ecg.conv_transpose"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 2, 2>, operandSegmentSizes = array<i32: 1, 1, 1>, output_padding = array<i64: 0, 0>, output_shape = array<i64>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x6xf32>, tensor<4x3x2x2xf32>, tensor<3xf32>) -> tensor<1x3x10x12xf32>
  return %0 : tensor<1x3x10x12xf32>
}

// -----

// Stride 1: one phase, a convolution of the padded input with the kernel reversed
// (a generic walking it backwards) and no assembly.
// CHECK: #[[REVERSE:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, -d2 + 2)>
// CHECK-LABEL: func.func @stride_1
// CHECK: tensor.pad %arg0 low[0, 0, 2] high[0, 0, 2]
// CHECK: linalg.generic {indexing_maps = [#[[REVERSE]], #{{.*}}]
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x1x11xf32>, tensor<3x2x1x3xf32>)
// CHECK-NOT: tensor.concat
// CHECK: return
func.func @stride_1(%x: tensor<1x2x7xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x3x9xf32> {
  %0 = "ecg.conv_transpose"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, operandSegmentSizes = array<i32: 1, 1, 0>, output_padding = array<i64: 0>, output_shape = array<i64>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x7xf32>, tensor<2x3x3xf32>) -> tensor<1x3x9xf32>
  return %0 : tensor<1x3x9xf32>
}

// -----

// Stride 3 with a 2-wide kernel: the third phase has no tap, zeros.
// CHECK-LABEL: func.func @phases_without_taps
// CHECK-COUNT-2: linalg.conv_2d_nchw_fchw
// CHECK: linalg.fill
// CHECK: tensor.concat dim(0) {{.*}} -> tensor<3x1x1x4xf32>
func.func @phases_without_taps(%x: tensor<1x1x4xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x11xf32> {
  %0 = "ecg.conv_transpose"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 2>, operandSegmentSizes = array<i32: 1, 1, 0>, output_padding = array<i64: 0>, output_shape = array<i64>, pads = array<i64: 0, 0>, strides = array<i64: 3>} : (tensor<1x1x4xf32>, tensor<1x1x2xf32>) -> tensor<1x1x11xf32>
  return %0 : tensor<1x1x11xf32>
}
