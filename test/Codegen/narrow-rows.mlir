// Element-wise ops over rows narrower than a vector (codegen/cpu/narrow_rows.py): the
// innermost loop is merged into the loop before it while the merged row is one tile
// of the row schedule (at most four vectors: 32 f32 on AVX2) ending in a masked
// vector, and every operand reads both loops together or neither: the operands
// collapse as views and the result is expanded back. A per-channel bias stops the
// merge at the channels; a slice not whole along the merged dims (a window's taps)
// keeps the op's shape.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 | FileCheck %s --check-prefix=VEC

// SiLU over 7x7 planes: rows of 7, then 49 (more than four vectors): [1, 16, 49].
// CHECK-LABEL: func.func @silu_7x7(
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x16x7x7xf32> into tensor<1x16x49xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x16x49xf32>) outs(%{{.*}} : tensor<1x16x49xf32>)
// CHECK:         tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 16, 7, 7]
// VEC-LABEL: func.func @silu_7x7(
// VEC:         arith.mulf %{{.*}}, %{{.*}} : vector<1x1x32xf32>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @silu_7x7(%x: tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x16x7x7xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x : tensor<1x16x7x7xf32>) outs(%e : tensor<1x16x7x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x2 = math.exp %n : f32
    %d = arith.addf %x2, %one : f32
    %s = arith.divf %a, %d : f32
    linalg.yield %s : f32
  } -> tensor<1x16x7x7xf32>
  return %r : tensor<1x16x7x7xf32>
}

// -----

// 3x3 planes: 9, then 9 x 5 channels = 45 (more than four vectors).
// CHECK-LABEL: func.func @planes_3x3(
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<2x5x3x3xf32> into tensor<2x45xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<2x45xf32>, tensor<2x45xf32>)
// CHECK:         tensor.expand_shape %[[R]] {{\[\[}}0], [1, 2, 3]] output_shape [2, 5, 3, 3]
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @planes_3x3(%x: tensor<2x5x3x3xf32>, %y: tensor<2x5x3x3xf32>) -> tensor<2x5x3x3xf32> {
  %e = tensor.empty() : tensor<2x5x3x3xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x, %y : tensor<2x5x3x3xf32>, tensor<2x5x3x3xf32>) outs(%e : tensor<2x5x3x3xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.mulf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x5x3x3xf32>
  return %s : tensor<2x5x3x3xf32>
}

// -----

// With a per-channel bias: rows of 9 (the bias reads the channels).
// CHECK-LABEL: func.func @planes_3x3_bias(
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<2x5x3x3xf32> into tensor<2x5x9xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[C]], %{{.*}} : tensor<2x5x9xf32>, tensor<5xf32>)
#idb = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @planes_3x3_bias(%x: tensor<2x5x3x3xf32>, %b: tensor<5xf32>) -> tensor<2x5x3x3xf32> {
  %e = tensor.empty() : tensor<2x5x3x3xf32>
  %r = linalg.generic {indexing_maps = [#idb, #chan, #idb], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x, %b : tensor<2x5x3x3xf32>, tensor<5xf32>) outs(%e : tensor<2x5x3x3xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x5x3x3xf32>
  return %r : tensor<2x5x3x3xf32>
}

// -----

// A slice taking part of each row (a window's tap) and a transposed operand stop
// the merge; rows a multiple of the vector (16 of 8 lanes) are whole already.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<1x4x5x5xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<1x4x5x5xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<1x4x16x16xf32>)
// CHECK-NOT:     tensor.collapse_shape
#idk = affine_map<(n, c, h, w) -> (n, c, h, w)>
#tr = affine_map<(n, c, h, w) -> (n, c, w, h)>
func.func @kept(%x: tensor<1x4x7x7xf32>, %y: tensor<1x4x16x16xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x16x16xf32>) {
  %tap = tensor.extract_slice %x[0, 0, 1, 1] [1, 4, 5, 5] [1, 1, 1, 1] : tensor<1x4x7x7xf32> to tensor<1x4x5x5xf32>
  %e = tensor.empty() : tensor<1x4x5x5xf32>
  %r = linalg.generic {indexing_maps = [#idk, #idk], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%tap : tensor<1x4x5x5xf32>) outs(%e : tensor<1x4x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<1x4x5x5xf32>
  %t2 = linalg.generic {indexing_maps = [#tr, #idk], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%r : tensor<1x4x5x5xf32>) outs(%e : tensor<1x4x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<1x4x5x5xf32>
  %ey = tensor.empty() : tensor<1x4x16x16xf32>
  %w = linalg.generic {indexing_maps = [#idk, #idk], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y : tensor<1x4x16x16xf32>) outs(%ey : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<1x4x16x16xf32>
  return %r, %t2, %w : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x16x16xf32>
}

// -----

// A squeeze-and-excitation scale: an operand [1, C, 1, 1] read at constant indices
// (d0, d1, 0, 0). Merged, its four indices would exceed the three loops, which the
// vectorizer leaves as scalar loops: the op keeps its shape.
// CHECK-LABEL: func.func @excitation(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x12x3x3xf32>, tensor<1x12x1x1xf32>)
// VEC-LABEL: func.func @excitation(
// VEC:         arith.mulf %{{.*}}, %{{.*}} : vector<1x1x1x3xf32>
#ide = affine_map<(n, c, h, w) -> (n, c, h, w)>
#scale = affine_map<(n, c, h, w) -> (n, c, 0, 0)>
func.func @excitation(%x: tensor<1x12x3x3xf32>, %s: tensor<1x12x1x1xf32>) -> tensor<1x12x3x3xf32> {
  %e = tensor.empty() : tensor<1x12x3x3xf32>
  %r = linalg.generic {indexing_maps = [#ide, #scale, #ide], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x, %s : tensor<1x12x3x3xf32>, tensor<1x12x1x1xf32>) outs(%e : tensor<1x12x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<1x12x3x3xf32>
  return %r : tensor<1x12x3x3xf32>
}

// -----

// An im2col copy of a stride-2 3x3 window (each tap of each output): its input
// is read at compound indices (2 * y + i), which no collapse of (y, x) expresses: kept.
// CHECK-LABEL: func.func @strided_patches(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<1x4x8x8xf32>) outs(%{{.*}} : tensor<4x3x3x3x3xf32>)
#read = affine_map<(c, i, j, y, x) -> (0, c, y * 2 + i, x * 2 + j)>
#id5 = affine_map<(c, i, j, y, x) -> (c, i, j, y, x)>
func.func @strided_patches(%x: tensor<1x4x8x8xf32>) -> tensor<4x3x3x3x3xf32> {
  %e = tensor.empty() : tensor<4x3x3x3x3xf32>
  %r = linalg.generic {indexing_maps = [#read, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
       ins(%x : tensor<1x4x8x8xf32>) outs(%e : tensor<4x3x3x3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x3x3x3x3xf32>
  return %r : tensor<4x3x3x3x3xf32>
}
