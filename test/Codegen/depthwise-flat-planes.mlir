// Depthwise convolutions over planes narrower than a vector (codegen/cpu/flat_planes.py):
// each channel's output computed as one flat row with the input's pitch, in whole
// vectors ([N, C, V, lanes]: 8 on AVX2), every tap a contiguous slice of the padded
// input collapsed to [N, C, HP * WP] (offset i * WP + j), the pad given zero rows at the
// bottom for the dropped columns that read past the plane, the taps summed in four
// chains. A cheap consumer (bias, ReLU6) is computed in the generic; SiLU after a 5x5
// window stays apart, on the output copied out of the flat rows (its rows merged). A
// 3x3 window of stride 2, or a 5x5 one on rows of half a vector, keeps the whole-tensor
// taps; a 5x5 one of stride 2 on wider rows reads its input split into phase planes.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// 7x7, 3x3: pitch 9, 63 outputs -> 64 (eight vectors of 8), reads up to 2 * 9 + 2 + 64
// = 84 elements: 10 rows (one more at the bottom).
// CHECK-LABEL: func.func @relu6_7x7(
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 1]
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0], [1], [2, 3]] : tensor<1x8x10x9xf32> into tensor<1x8x90xf32>
// CHECK:         %[[T0:.*]] = tensor.extract_slice %[[FLAT]][0, 0, 0] [1, 8, 64] [1, 1, 1]
// CHECK:         tensor.expand_shape %[[T0]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 8, 8, 8]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 1] [1, 8, 64] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 9] [1, 8, 64] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 20] [1, 8, 64] [1, 1, 1]
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-COUNT-4:   arith.mulf
// CHECK-COUNT-5:   math.fma
// CHECK-COUNT-3:   arith.addf
// CHECK:           arith.maximumf
// CHECK:           arith.minimumf
// CHECK:         } -> tensor<1x8x8x8xf32>
// CHECK:         %[[ROW:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1], [2, 3]] : tensor<1x8x8x8xf32> into tensor<1x8x64xf32>
// CHECK:         %[[USED:.*]] = tensor.extract_slice %[[ROW]][0, 0, 0] [1, 8, 63] [1, 1, 1]
// CHECK:         %[[GRID:.*]] = tensor.expand_shape %[[USED]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 8, 7, 9]
// CHECK:         %[[OUT:.*]] = tensor.extract_slice %[[GRID]][0, 0, 0, 0] [1, 8, 7, 7] [1, 1, 1, 1]
// CHECK:         return %[[OUT]]
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#identity = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @relu6_7x7(%x: tensor<1x8x7x7xf32>, %k: tensor<8x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x8x7x7xf32> to tensor<1x8x9x9xf32>
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %k : tensor<1x8x9x9xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %r = linalg.generic {indexing_maps = [#identity, #bias, #identity], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b : tensor<1x8x7x7xf32>, tensor<8xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %lo = arith.maximumf %s, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x8x7x7xf32>
  return %r : tensor<1x8x7x7xf32>
}

// -----

// 6x6, 5x5 with SiLU: the taps alone (pitch 10, 60 -> 64), the output copied out of
// them (reading 4 * 10 + 4 + 64 = 108 elements: 11 rows), SiLU on the copy with its
// rows merged (its exp approximated: math.floor marks it).
// CHECK-LABEL: func.func @silu_6x6(
// CHECK:         tensor.pad %{{.*}} low[0, 0, 2, 2] high[0, 0, 3, 2]
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-NOT:       math.floor
// CHECK:         } -> tensor<1x4x8x8xf32>
// CHECK:         %[[OUT:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1]
// CHECK:         %[[COPY:.*]] = linalg.copy {{.*}}ins(%[[OUT]] : tensor<1x4x6x6xf32>)
// CHECK:         %[[MERGED:.*]] = tensor.collapse_shape %[[COPY]] {{\[\[}}0], [1], [2, 3]] : tensor<1x4x6x6xf32> into tensor<1x4x36xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[MERGED]] : tensor<1x4x36xf32>)
// CHECK:           math.floor
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @silu_6x6(%x: tensor<1x4x6x6xf32>, %k: tensor<4x5x5xf32>) -> tensor<1x4x6x6xf32> {
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x10x10xf32>
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %k : tensor<1x4x10x10xf32>, tensor<4x5x5xf32>) outs(%f : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y : tensor<1x4x6x6xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %s = arith.divf %v, %d : f32
    linalg.yield %s : f32
  } -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// A strided window keeps the whole-tensor taps (strided slices of the padded input).
// CHECK-LABEL: func.func @strided(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 3, 3] [1, 1, 2, 2]
func.func @strided(%x: tensor<1x4x7x7xf32>, %k: tensor<4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %k : tensor<1x4x7x7xf32>, tensor<4x3x3xf32>) outs(%f : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %y : tensor<1x4x3x3xf32>
}

// -----

// A 5x5 window of stride 2 on rows over half a vector (5 of 8): the input (17x13,
// read in place) padded to 18x14 and split into its four phase planes of 9 rows of
// pitch 7 (63 elements each) by one transposing generic, written into a flat row of
// 4 * 63 + 1 elements whose last one is zeroed: the output, 7 rows of pitch 7 (49 ->
// 56, seven vectors of 8), reads from tap (3, 3) (plane (1, 1), row 1, column 1:
// offset 3 * 63 + 7 + 1 = 197) up to 253. Tap (i, j) at ((i % 2) * 2 + j % 2) * 63 +
// (i // 2) * 7 + j // 2.
// CHECK-LABEL: func.func @strided_5x5(
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3], [4, 5]] output_shape [1, 4, 9, 2, 7, 2]
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x4x253xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x1xf32>)
// CHECK:         %[[B:.*]] = tensor.insert_slice %[[Z]] into %[[E]][0, 0, 252] [1, 4, 1] [1, 1, 1]
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[B]][0, 0, 0] [1, 4, 252] [1, 1, 1]
// CHECK:         %[[INTO:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1], [2, 3, 4, 5]] output_shape [1, 4, 2, 2, 9, 7]
// CHECK:         %[[PL:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<1x4x9x2x7x2xf32>) outs(%[[INTO]] : tensor<1x4x2x2x9x7xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[PL]] {{\[\[}}0], [1], [2, 3, 4, 5]] : tensor<1x4x2x2x9x7xf32> into tensor<1x4x252xf32>
// CHECK:         %[[FLAT:.*]] = tensor.insert_slice %[[C]] into %[[B]][0, 0, 0] [1, 4, 252] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 0] [1, 4, 56] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 63] [1, 4, 56] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 1] [1, 4, 56] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 197] [1, 4, 56] [1, 1, 1]
// CHECK:         tensor.extract_slice %[[FLAT]][0, 0, 16] [1, 4, 56] [1, 1, 1]
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-COUNT-4:   arith.mulf
// CHECK-COUNT-21:  math.fma
// CHECK:         } -> tensor<1x4x7x8xf32>
// CHECK:         %[[ROW:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1], [2, 3]] : tensor<1x4x7x8xf32> into tensor<1x4x56xf32>
// CHECK:         %[[USED:.*]] = tensor.extract_slice %[[ROW]][0, 0, 0] [1, 4, 49] [1, 1, 1]
// CHECK:         %[[GRID:.*]] = tensor.expand_shape %[[USED]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 7, 7]
// CHECK:         %[[OUT:.*]] = tensor.extract_slice %[[GRID]][0, 0, 0, 0] [1, 4, 7, 5] [1, 1, 1, 1]
// CHECK:         return %[[OUT]]
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @strided_5x5(%x: tensor<1x4x17x13xf32>, %k: tensor<4x5x5xf32>) -> tensor<1x4x7x5xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x7x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x7x5xf32>) -> tensor<1x4x7x5xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %k : tensor<1x4x17x13xf32>, tensor<4x5x5xf32>) outs(%f : tensor<1x4x7x5xf32>) -> tensor<1x4x7x5xf32>
  return %y : tensor<1x4x7x5xf32>
}

// -----

// A 5x5 window of stride 2 on rows of half a vector (4 of 8) keeps the whole-tensor
// taps: the phase planes' copy costs more than the per-lane loads it saves.
// CHECK-LABEL: func.func @strided_half_vector(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 2, 2]
func.func @strided_half_vector(%x: tensor<1x4x11x11xf32>, %k: tensor<4x5x5xf32>) -> tensor<1x4x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %k : tensor<1x4x11x11xf32>, tensor<4x5x5xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}
