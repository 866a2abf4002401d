// A convolution of horizontal stride 2 (codegen/cpu/convolutions.py,
// split_strided_convolutions): one convolution of stride 1 per phase of the input
// columns, whose vector loads along the output width are then contiguous. Its input,
// padded to whole vectors of output columns and to a whole number of column pairs
// (one pad), is viewed as [N, C, H, W/2, 2] and transposed once into its two phases
// [N, C, H, 2, W/2] (windows.py's pooling windows split the same way, see
// strided-window-phases.mlir): the transpose's vectors hold whole [2, 17] tiles of a
// row, where a copy per phase read every other column one element at a time (DeepLab's
// 3 -> 16 channel 3x3/2 first layer: 0.036 -> 0.024 ms on AVX-512). Phase 0 holds the
// taps kw = 0, 2 (17 columns for 16 outputs), phase 1 the tap kw = 1 (16 columns).
// The transpose's vectors hold whole rows (rows.MAX_WHOLE_TRANSPOSED_ROW), up to a
// 224x224 image's [2, 113]: tiles of 64 columns leave a ragged last one and mask every
// tile, which made the transposing copy slower than a strided copy per phase there
// (1.03-1.19x; whole rows 0.71-0.83x on AVX-512).
// A zero-padded input of even width (padded by 1 here) is not copied into a padded
// tensor first: the image's own phases are written into the interior of a zeroed
// buffer (padded_phases), image phase q into padded phase (q + 1) % 2, the phase rows
// written 18 floats apart (17 + 1) and read through a [2, 17] view of the same rows:
// phase 0 (the taps kw = 0, 2) is row 1 of that view. An image of odd width is still
// padded (to whole column pairs too), then split (last case).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=PLAN

// CHECK-DAG:   #[[PAIRS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4, d3)>
// CHECK-LABEL: func.func @conv_stride_2(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x3x20x20xf32>, %[[W:[^:]*]]: tensor<16x3x3x3xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<1x3x22x2x18xf32>
// CHECK:         %[[INTERIOR:.*]] = tensor.extract_slice %[[ZERO]][0, 0, 1, 0, 0] [1, 3, 20, 2, 10] [1, 1, 1, 1, 1]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 3, 20, 10, 2] : tensor<1x3x20x20xf32> into tensor<1x3x20x10x2xf32>
// CHECK:         %[[T:.*]] = linalg.generic {indexing_maps = [#[[PAIRS]], {{.*}}]{{.*}} ins(%[[V]] : tensor<1x3x20x10x2xf32>) outs(%[[INTERIOR]] : tensor<1x3x20x2x10xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.insert_slice %[[T]] into %[[ZERO]][0, 0, 1, 0, 0] [1, 3, 20, 2, 10] [1, 1, 1, 1, 1]
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[ROWS]] {{.*}} into tensor<1x3x22x36xf32>
// CHECK:         %[[READ:.*]] = tensor.extract_slice %[[FLAT]][0, 0, 0, 0] [1, 3, 22, 34] [1, 1, 1, 1]
// CHECK:         %[[PHASES:.*]] = tensor.expand_shape %[[READ]] {{.*}} into tensor<1x3x22x2x17xf32>
// CHECK:         %[[X0:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 1, 0] [1, 3, 22, 1, 17] [1, 1, 1, 1, 1] : tensor<1x3x22x2x17xf32> to tensor<1x3x22x17xf32>
// CHECK:         %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [16, 3, 3, 2] [1, 1, 1, 2]
// CHECK:         %[[Y0:.*]] = linalg.conv_2d_nchw_fchw {{.*}}strides = dense<[2, 1]>{{.*}} ins(%[[X0]], %[[W0]] : tensor<1x3x22x17xf32>, tensor<16x3x3x2xf32>)
// CHECK:         %[[X1:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 0] [1, 3, 22, 1, 16] [1, 1, 1, 1, 1] : tensor<1x3x22x2x17xf32> to tensor<1x3x22x16xf32>
// CHECK:         %[[W1:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 1] [16, 3, 3, 1] [1, 1, 1, 2]
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}}strides = dense<[2, 1]>{{.*}} ins(%[[X1]], %[[W1]] : tensor<1x3x22x16xf32>, tensor<16x3x3x1xf32>) outs(%[[Y0]] :
// CHECK-NOT:     linalg.copy
// PLAN: linalg.fill [1, 3, 22, 2, 18] vectorized {{.*}} @conv_stride_2
// PLAN-NEXT: linalg.generic [1, 3, 20, 2, 10] vectorized {'vector': [1, 1, 1, 2, 10]} @conv_stride_2
// PLAN-NEXT: linalg.conv_2d_nchw_fchw [1, 16, 10, 16, 3, 3, 1] conv2d {{.*}}'phases': 2
func.func @conv_stride_2(%x: tensor<1x3x20x20xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x10x10xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x3x20x20xf32> to tensor<1x3x22x22xf32>
  %e = tensor.empty() : tensor<1x16x10x10xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x3x22x22xf32>, tensor<16x3x3x3xf32>) outs(%i : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  return %y : tensor<1x16x10x10xf32>
}

// -----

// CHECK-LABEL: func.func @conv_stride_2_large_plane(
// CHECK-NOT:     tensor.pad
// CHECK:         %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<1x3x226x2x114xf32>
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x3x224x112x2xf32>) outs(%{{.*}} : tensor<1x3x224x2x112xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.insert_slice %[[T]] into %[[ZERO]][0, 0, 1, 0, 0] [1, 3, 224, 2, 112] [1, 1, 1, 1, 1]
// CHECK:         %[[PHASES:.*]] = tensor.expand_shape %{{.*}} into tensor<1x3x226x2x113xf32>
// CHECK:         %[[X0:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 1, 0] [1, 3, 226, 1, 113] [1, 1, 1, 1, 1]
// CHECK:         %[[Y0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X0]], %{{.*}} : tensor<1x3x226x113xf32>, tensor<16x3x3x2xf32>)
// CHECK:         %[[X1:.*]] = tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 0] [1, 3, 226, 1, 112] [1, 1, 1, 1, 1]
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X1]], %{{.*}} : tensor<1x3x226x112xf32>, tensor<16x3x3x1xf32>) outs(%[[Y0]] :
// CHECK-NOT:     linalg.copy
// PLAN: linalg.generic [1, 3, 224, 2, 112] vectorized {'vector': [1, 1, 1, 2, 112]} @conv_stride_2_large_plane
func.func @conv_stride_2_large_plane(%x: tensor<1x3x224x224xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x112x112xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x3x224x224xf32> to tensor<1x3x226x226xf32>
  %e = tensor.empty() : tensor<1x16x112x112xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x112x112xf32>) -> tensor<1x16x112x112xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x3x226x226xf32>, tensor<16x3x3x3xf32>) outs(%i : tensor<1x16x112x112xf32>) -> tensor<1x16x112x112xf32>
  return %y : tensor<1x16x112x112xf32>
}

// -----

// CHECK-DAG:   #[[PAIRS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4, d3)>
// CHECK-LABEL: func.func @conv_stride_2_odd_width(
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 12]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 3, 23, 17, 2] : tensor<1x3x23x34xf32> into tensor<1x3x23x17x2xf32>
// CHECK:         %[[T:.*]] = linalg.generic {indexing_maps = [#[[PAIRS]], {{.*}}]{{.*}} ins(%[[V]] : tensor<1x3x23x17x2xf32>) outs(%{{.*}} : tensor<1x3x23x2x17xf32>)
// CHECK:         tensor.extract_slice %[[T]][0, 0, 0, 0, 0] [1, 3, 23, 1, 17] [1, 1, 1, 1, 1]
// CHECK:         tensor.extract_slice %[[T]][0, 0, 0, 1, 0] [1, 3, 23, 1, 16] [1, 1, 1, 1, 1]
func.func @conv_stride_2_odd_width(%x: tensor<1x3x21x21xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x11x11xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x3x21x21xf32> to tensor<1x3x23x23xf32>
  %e = tensor.empty() : tensor<1x16x11x11xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x11x11xf32>) -> tensor<1x16x11x11xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x3x23x23xf32>, tensor<16x3x3x3xf32>) outs(%i : tensor<1x16x11x11xf32>) -> tensor<1x16x11x11xf32>
  return %y : tensor<1x16x11x11xf32>
}
