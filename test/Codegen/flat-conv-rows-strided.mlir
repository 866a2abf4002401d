// Stride-2 convolutions computed over flat rows of their phase planes
// (codegen/cpu/flat_conv_rows.py): the zero-padded input split into its four phase
// planes [2, 2, HP/2, WP/2] laid one after the other in each channel's flat row; window
// row i's taps of column phase b one 1 x ceil((3 - b) / 2) convolution of plane (i % 2,
// b) at row offset i // 2, the six accumulated in the same register tiles; the output
// rows, WP/2 apart, sliced out of the flat result. An image of even height and width is
// written into the planes by one transposing generic straight from the image, only the
// planes' borders filled with zeros (codegen/cpu/image_phase_planes.py: the planes in the
// image's phase order, padded phase (a, b) at plane 2 ((a - top) % 2) + (b - left) % 2);
// other inputs are padded, then split (flat_planes.phase_planes). With AVX-512 (32 vector
// registers) and 64 input channels or more; on x86-64-v3, or over fewer channels, the
// column phases of split_strided_convolutions stay.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN

// A 14x14 output over planes of pitch 15: 210 flat columns in 224 (7 tiles of 32), not
// 14 rows of 16. Padding 1: image phase (ya, xb) lands at row ya, column xb of its plane,
// element (ya, xb, t, s) at ya * 465 + xb * 226 + t * 15 + s of the channel's 930 floats
// (nested views: [2, 465] > [2, 2, 226] > [2, 2, 14, 15] > [2, 2, 14, 14]); padded phase
// (0, 0) is plane 3 (at 675), (1, 1) plane 0.
// CHECK-LABEL: func.func @conv_3x3s2_flat(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x64x28x28xf32>, %[[W:[^:]*]]: tensor<16x64x3x3xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1x16x1x224xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[BUF:.*]] = tensor.empty() : tensor<1x64x930xf32>
// CHECK:         %[[PLANES:.*]] = tensor.expand_shape {{.*}} output_shape [1, 64, 2, 2, 15, 15]
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %[[PLANES]][0, 0, 0, 0, 14, 0] [1, 64, 1, 1, 1, 15]
// CHECK:         linalg.fill {{.*}} outs(%[[ROW]] : tensor<1x64x1x1x1x15xf32>)
// CHECK:         %[[COLUMN:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 1, 0, 0] [1, 64, 1, 1, 14, 1]
// CHECK:         linalg.fill {{.*}} outs(%[[COLUMN]] : tensor<1x64x1x1x14x1xf32>)
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 1, 0, 0, 0] [1, 64, 1, 1, 1, 15]
// CHECK:         %[[TAIL:.*]] = tensor.extract_slice %{{.*}}[0, 0, 900] [1, 64, 15]
// CHECK:         linalg.fill {{.*}} outs(%[[TAIL]] : tensor<1x64x15xf32>)
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 64, 2, 465]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 64, 2, 452]
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 64, 2, 2, 226]
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 64, 2, 2, 14, 15]
// CHECK:         %[[INTERIOR:.*]] = tensor.extract_slice %{{.*}} [1, 64, 2, 2, 14, 14]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[X]] {{.*}} into tensor<1x64x14x2x14x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[V]] : tensor<1x64x14x2x14x2xf32>) outs(%[[INTERIOR]] : tensor<1x64x2x2x14x14xf32>)
// CHECK:         %[[F:.*]] = tensor.expand_shape %{{.*}} into tensor<1x64x1x930xf32>
// CHECK:         %[[X00:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 675] [1, 64, 1, 225]
// CHECK:         %[[W00:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [16, 64, 1, 2] [1, 1, 1, 2]
// CHECK:         %[[Y0:.*]] = linalg.conv_2d_nchw_fchw {{.*}}strides = dense<1> {{.*}} ins(%[[X00]], %[[W00]] : {{.*}}) outs(%[[INIT]] : tensor<1x16x1x224xf32>)
// CHECK:         %[[X01:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 450] [1, 64, 1, 224]
// CHECK:         %[[W01:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 1] [16, 64, 1, 1] [1, 1, 1, 2]
// CHECK:         %[[Y1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X01]], %[[W01]] : {{.*}}) outs(%[[Y0]] :
// CHECK:         %[[X10:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 225] [1, 64, 1, 225]
// CHECK:         %[[W10:.*]] = tensor.extract_slice %[[W]][0, 0, 1, 0] [16, 64, 1, 2] [1, 1, 1, 2]
// CHECK:         %[[Y2:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X10]], %[[W10]] : {{.*}}) outs(%[[Y1]] :
// CHECK:         %[[X11:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 0] [1, 64, 1, 224]
// CHECK:         %[[W11:.*]] = tensor.extract_slice %[[W]][0, 0, 1, 1] [16, 64, 1, 1] [1, 1, 1, 2]
// CHECK:         %[[Y3:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X11]], %[[W11]] : {{.*}}) outs(%[[Y2]] :
// CHECK:         %[[X20:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 690] [1, 64, 1, 225]
// CHECK:         %[[W20:.*]] = tensor.extract_slice %[[W]][0, 0, 2, 0] [16, 64, 1, 2] [1, 1, 1, 2]
// CHECK:         %[[Y4:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X20]], %[[W20]] : {{.*}}) outs(%[[Y3]] :
// CHECK:         %[[X21:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 465] [1, 64, 1, 224]
// CHECK:         %[[W21:.*]] = tensor.extract_slice %[[W]][0, 0, 2, 1] [16, 64, 1, 1] [1, 1, 1, 2]
// CHECK:         %[[Y5:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X21]], %[[W21]] : {{.*}}) outs(%[[Y4]] :
// CHECK:         tensor.extract_slice %[[Y5]][0, 0, 0, 0] [1, 16, 1, 210]
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 16, 14, 15]
// CHECK:         %[[Y:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 14, 14] [1, 1, 1, 1] : tensor<1x16x14x15xf32> to tensor<1x16x14x14xf32>
// CHECK:         return %[[Y]]
// AVX2-LABEL: func.func @conv_3x3s2_flat(
// AVX2-NOT:      tensor<1x64x2x2x15x15xf32>
// AVX2:          linalg.conv_2d_nchw_fchw {{.*}}strides = dense<[2, 1]> {{.*}} outs(%{{.*}} : tensor<1x16x14x16xf32>)
// AVX2:          linalg.conv_2d_nchw_fchw {{.*}}strides = dense<[2, 1]> {{.*}} outs(%{{.*}} : tensor<1x16x14x16xf32>)
// PLAN: linalg.generic [1, 64, 2, 2, 14, 14] vectorized {{.*}} @conv_3x3s2_flat
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 1, 224, 64, 1, 1] conv2d {'register_tile': (8, 32), 'phases': 6, {{.*}} @conv_3x3s2_flat
func.func @conv_3x3s2_flat(%x: tensor<1x64x28x28xf32>, %w: tensor<16x64x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x64x28x28xf32> to tensor<1x64x30x30xf32>
  %e = tensor.empty() : tensor<1x16x14x14xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x30x30xf32>, tensor<16x64x3x3xf32>) outs(%i : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %y : tensor<1x16x14x14xf32>
}


// -----

// An odd padded width and height (29): the pad rounds both up to whole planes (high
// + 1), the planes as above.
// CHECK-LABEL: func.func @conv_3x3s2_odd_flat(
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK:         tensor<1x64x27x27xf32> to tensor<1x64x30x30xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x64x2x2x15x15xf32>)
// CHECK-COUNT-6: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x1x224xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 14, 14] [1, 1, 1, 1] : tensor<1x16x14x15xf32> to tensor<1x16x14x14xf32>
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 1, 224, 64, 1, 1] conv2d {'register_tile': (8, 32), 'phases': 6, {{.*}} @conv_3x3s2_odd_flat

func.func @conv_3x3s2_odd_flat(%x: tensor<1x64x27x27xf32>, %w: tensor<16x64x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x64x27x27xf32> to tensor<1x64x29x29xf32>
  %e = tensor.empty() : tensor<1x16x14x14xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x29x29xf32>, tensor<16x64x3x3xf32>) outs(%i : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %y : tensor<1x16x14x14xf32>
}


// -----

// ResNet-50's 28x28 output over planes of pitch 29: 812 flat columns, 25 tiles of 32
// and the last 12 a peeled tile of their own (tiles.peeled_conv_columns), not padded to
// 832; over this input (0.9 MiB) the column tiles go outer.
// CHECK-LABEL: func.func @conv_3x3s2_flat_peeled(
// CHECK:         linalg.fill {{.*}} -> tensor<1x16x1x812xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x64x2x2x28x28xf32>)
// CHECK-COUNT-6: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x1x812xf32>
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 16, 28, 29]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 28, 28] [1, 1, 1, 1] : tensor<1x16x28x29xf32> to tensor<1x16x28x28xf32>
// AVX2-LABEL: func.func @conv_3x3s2_flat_peeled(
// AVX2-NOT:      tensor<1x16x1x812xf32>
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 1, 812, 64, 1, 1] conv2d {'register_tile': (8, 32), 'phases': 6, 'rows_outer': True, 'peeled_columns': 12, {{.*}} @conv_3x3s2_flat_peeled

func.func @conv_3x3s2_flat_peeled(%x: tensor<1x64x56x56xf32>, %w: tensor<16x64x3x3xf32>) -> tensor<1x16x28x28xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x64x56x56xf32> to tensor<1x64x58x58xf32>
  %e = tensor.empty() : tensor<1x16x28x28xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x28x28xf32>) -> tensor<1x16x28x28xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x58x58xf32>, tensor<16x64x3x3xf32>) outs(%i : tensor<1x16x28x28xf32>) -> tensor<1x16x28x28xf32>
  return %y : tensor<1x16x28x28xf32>
}


// -----

// 32 input channels (under 64): the column phases stay.
// CHECK-LABEL: func.func @conv_3x3s2_few_channels_keep_phases(
// CHECK-NOT:     tensor<1x32x2x2x15x15xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}}strides = dense<[2, 1]> {{.*}} outs(%{{.*}} : tensor<1x16x14x16xf32>)
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}}strides = dense<[2, 1]> {{.*}} outs(%{{.*}} : tensor<1x16x14x16xf32>)
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 14, 16, 32, 3, 1] conv2d {{.*}}'phases': 2, {{.*}} @conv_3x3s2_few_channels_keep_phases

func.func @conv_3x3s2_few_channels_keep_phases(%x: tensor<1x32x28x28xf32>, %w: tensor<16x32x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x32x28x28xf32> to tensor<1x32x30x30xf32>
  %e = tensor.empty() : tensor<1x16x14x14xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x32x30x30xf32>, tensor<16x32x3x3xf32>) outs(%i : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %y : tensor<1x16x14x14xf32>
}


// -----

// Top padding only (odd), an even 30x34 image: written straight into the planes (pitch
// 18, 16 rows): element (ya, xb, t, s) at ya * 594 + xb * 288 + t * 18 + s; padded phase
// (0, 0) is plane 2 (at 576), (1, 0) plane 0.
// CHECK-LABEL: func.func @conv_3x3s2_top_padding(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x64x30x34xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 64, 2, 594]
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 64, 2, 2, 288]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[X]] {{.*}} into tensor<1x64x15x2x17x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[V]] : tensor<1x64x15x2x17x2xf32>) outs(%{{.*}} : tensor<1x64x2x2x15x17xf32>)
// CHECK:         %[[F:.*]] = tensor.expand_shape %{{.*}} into tensor<1x64x1x1188xf32>
// CHECK:         tensor.extract_slice %[[F]][0, 0, 0, 576] [1, 64, 1, 271]
// CHECK:         tensor.extract_slice %[[F]][0, 0, 0, 864] [1, 64, 1, 270]
// CHECK:         tensor.extract_slice %[[F]][0, 0, 0, 0] [1, 64, 1, 271]
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x1x270xf32>

func.func @conv_3x3s2_top_padding(%x: tensor<1x64x30x34xf32>, %w: tensor<16x64x3x3xf32>) -> tensor<1x16x15x17xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 0, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x64x30x34xf32> to tensor<1x64x31x35xf32>
  %e = tensor.empty() : tensor<1x16x15x17xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x15x17xf32>) -> tensor<1x16x15x17xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x31x35xf32>, tensor<16x64x3x3xf32>) outs(%i : tensor<1x16x15x17xf32>) -> tensor<1x16x15x17xf32>
  return %y : tensor<1x16x15x17xf32>
}


// -----

// Left padding only (odd), top even: the nested views would overlap (the column phases'
// planes 2 floats further apart than the row phases allow); padded, then split.
// CHECK-LABEL: func.func @conv_3x3s2_left_padding(
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 1] high[0, 0, 2, 1]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[P]] {{.*}} into tensor<1x64x16x2x18x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[V]] : tensor<1x64x16x2x18x2xf32>) outs(%{{.*}} : tensor<1x64x2x2x16x18xf32>)
// CHECK-COUNT-6: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x1x270xf32>

func.func @conv_3x3s2_left_padding(%x: tensor<1x64x30x34xf32>, %w: tensor<16x64x3x3xf32>) -> tensor<1x16x15x17xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 1] high[0, 0, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x64x30x34xf32> to tensor<1x64x31x35xf32>
  %e = tensor.empty() : tensor<1x16x15x17xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x15x17xf32>) -> tensor<1x16x15x17xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x31x35xf32>, tensor<16x64x3x3xf32>) outs(%i : tensor<1x16x15x17xf32>) -> tensor<1x16x15x17xf32>
  return %y : tensor<1x16x15x17xf32>
}
