// Transposes that move the innermost dim (codegen/cpu/transposes.py): the result's
// innermost loop and the loop over the input's innermost dim are tiled to one square
// block, read as whole input rows and transposed in registers: a 16x16 block by 64
// two-source shuffles of rows, an 8x8 block (extents that 16 does not divide) by one
// shuffle of its 64 elements. Extents that 16 and 8 do not divide take 16x16 (or 8x8)
// blocks with the partial last block peeled; rows narrower than a block keep rows of
// vectors, unless their dims move together with others (merged first); a transpose
// keeping the innermost dim copies rows.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=PLAN

// PLAN: linalg.transpose [256, 512] vectorized {'transpose_block': 16, 'vector': [16, 16]} @matrix
// CHECK-LABEL: func.func @matrix(
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.transfer_read %{{.*}} : tensor<16x16xf32>, vector<16x16xf32>
// CHECK-NOT:         vector.transpose
// CHECK:             vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK-NOT:         vector.transpose
// CHECK:             vector.transfer_write %{{.*}} : vector<16x16xf32>, tensor<16x16xf32>
func.func @matrix(%x: tensor<512x256xf32>) -> tensor<256x512xf32> {
  %e = tensor.empty() : tensor<256x512xf32>
  %t = linalg.transpose ins(%x : tensor<512x256xf32>) outs(%e : tensor<256x512xf32>) permutation = [1, 0]
  return %t : tensor<256x512xf32>
}

// -----

// PLAN: linalg.transpose [1, 56, 56, 64] vectorized {'transpose_block': 8, 'vector': [1, 1, 8, 8]} @nchw_to_nhwc
// CHECK-LABEL: func.func @nchw_to_nhwc(
// CHECK:         vector.transfer_read %{{.*}} : tensor<1x8x1x8xf32>, vector<1x8x1x8xf32>
// CHECK:         vector.shuffle %{{.*}}, %{{.*}} [0, 8, 16, 24, {{.*}}] : vector<64xf32>, vector<64xf32>
// CHECK:         vector.transfer_write %{{.*}} : vector<1x1x8x8xf32>, tensor<1x1x8x8xf32>
func.func @nchw_to_nhwc(%x: tensor<1x64x56x56xf32>) -> tensor<1x56x56x64xf32> {
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x64x56x56xf32>) outs(%e : tensor<1x56x56x64xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x56x56x64xf32>
}

// -----

// An element-wise op reading its input transposed is blocked the same way.
// PLAN: linalg.generic [48, 32] vectorized {'transpose_block': 16, 'vector': [16, 16]} @transposed_relu
// CHECK-LABEL: func.func @transposed_relu(
// CHECK:         vector.shuffle %{{.*}} : vector<16xf32>, vector<16xf32>
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : vector<16x16xf32>
#tr = affine_map<(i, j) -> (j, i)>
#id = affine_map<(i, j) -> (i, j)>
func.func @transposed_relu(%x: tensor<32x48xf32>) -> tensor<48x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<48x32xf32>
  %r = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<32x48xf32>) outs(%e : tensor<48x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<48x32xf32>
  return %r : tensor<48x32xf32>
}

// -----

// 57 and 30: whole 16x16 blocks over the first 48 x 16, the partial last block of each
// dim peeled off its loop: every tile static, none masked.
// PLAN: linalg.transpose [30, 57] vectorized {'transpose_block': 16, 'peeled': True, 'vector': [16, 16]} @odd_extents
// CHECK-LABEL: func.func @odd_extents(
// CHECK:         scf.for %{{.*}} = %c0 to %c48 step %c16
// CHECK:           vector.transfer_read %{{.*}} : tensor<16x16xf32>, vector<16x16xf32>
// CHECK:           vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK:         vector.transfer_read %{{.*}} : tensor<9x16xf32>, vector<9x16xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c48 step %c16
// CHECK:           vector.transfer_read %{{.*}} : tensor<16x14xf32>, vector<14x16xf32>
// CHECK:         vector.transfer_read %{{.*}} : tensor<9x14xf32>, vector<14x9xf32>
// CHECK-NOT:     vector.mask
// CHECK:         return
func.func @odd_extents(%x: tensor<57x30xf32>) -> tensor<30x57xf32> {
  %e = tensor.empty() : tensor<30x57xf32>
  %t = linalg.transpose ins(%x : tensor<57x30xf32>) outs(%e : tensor<30x57xf32>) permutation = [1, 0]
  return %t : tensor<30x57xf32>
}

// -----

// A 7x7 plane made channels-last: rows of 7 hold no block, but the two dims move
// together, so they are merged (narrow_transposes.py): [1, 64, 49] -> [1, 49, 64] in
// 16x16 blocks, the 49th position a peeled [16 x 1] tile.
// PLAN: linalg.transpose [1, 49, 64] vectorized {'transpose_block': 16, 'peeled': True, 'vector': [1, 16, 16]} @planes
// CHECK-LABEL: func.func @planes(
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x64x7x7xf32> into tensor<1x64x49xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c48 step %c16
// CHECK:           vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK:         tensor.extract_slice %[[X]][0, %{{.*}}, 48] [1, 16, 1] [1, 1, 1]
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [1, 7, 7, 64] : tensor<1x49x64xf32> into tensor<1x7x7x64xf32>
func.func @planes(%x: tensor<1x64x7x7xf32>) -> tensor<1x7x7x64xf32> {
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x64x7x7xf32>) outs(%e : tensor<1x7x7x64xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x7x7x64xf32>
}

// -----

// Rows of 7 that move alone: no block fits; rows of vectors.
// PLAN: linalg.transpose [7, 57] vectorized {'vector': [1, 32]} @narrow
// CHECK-LABEL: func.func @narrow(
// CHECK-NOT:     vector.shuffle
func.func @narrow(%x: tensor<57x7xf32>) -> tensor<7x57xf32> {
  %e = tensor.empty() : tensor<7x57xf32>
  %t = linalg.transpose ins(%x : tensor<57x7xf32>) outs(%e : tensor<7x57xf32>) permutation = [1, 0]
  return %t : tensor<7x57xf32>
}

// -----

// Attention heads [B, S, H, D] -> [B, H, S, D]: the innermost dim stays; rows of D.
// PLAN: linalg.transpose [1, 12, 128, 64] vectorized {'vector': [1, 1, 1, 32]} @heads
// CHECK-LABEL: func.func @heads(
// CHECK-NOT:     vector.shuffle
func.func @heads(%x: tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32> {
  %e = tensor.empty() : tensor<1x12x128x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x128x12x64xf32>) outs(%e : tensor<1x12x128x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x12x128x64xf32>
}
