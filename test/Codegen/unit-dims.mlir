// Unit dims folded before the CPU schedule (codegen/cpu/unit_dims.py): an op whose
// innermost loop has extent 1 is rebuilt over its loops of extent > 1, so its vectors
// run along the innermost of those instead of being vectors of one element. Ops whose
// innermost loop is not a unit, contraction epilogues and generics reading
// linalg.index keep their shape.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 | FileCheck %s --check-prefix=VEC

// A [64, 64, 1] element-wise op: a [64, 64] generic between two views, vectors of 32
// (four AVX2 registers) along the 64.
// CHECK-LABEL: func.func @trailing_unit(
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<64x64x1xf32> into tensor<64x64xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %{{.*}} : tensor<64x64xf32>, tensor<64x64xf32>) outs(%{{.*}} : tensor<64x64xf32>)
// CHECK:         tensor.expand_shape %[[R]] {{\[\[}}0], [1, 2]] output_shape [64, 64, 1]
// VEC-LABEL: func.func @trailing_unit(
// VEC:         arith.mulf %{{.*}}, %{{.*}} : vector<1x32xf32>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
func.func @trailing_unit(%x: tensor<64x64x1xf32>, %y: tensor<64x64x1xf32>) -> tensor<64x64x1xf32> {
  %e = tensor.empty() : tensor<64x64x1xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x, %y : tensor<64x64x1xf32>, tensor<64x64x1xf32>) outs(%e : tensor<64x64x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<64x64x1xf32>
  return %r : tensor<64x64x1xf32>
}

// -----

// The [N, C, 1, 1] block after a global pool, with a per-channel operand broadcast
// as [1, C, 1, 1] (its unit dims read the constant 0 once the batch loop stays):
// rows of C. The pool itself, a reduction whose innermost parallel loop has extent 1,
// writes [N, C] from the fill of an [N, C] accumulator.
// CHECK-LABEL: func.func @after_global_pool(
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x96xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<8x96x7x7xf32>, tensor<7x7xf32>) outs(%[[F]] : tensor<8x96xf32>)
// CHECK:         %[[S:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2, 3]] : tensor<1x96x1x1xf32> into tensor<96xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %[[S]] : tensor<8x96xf32>, tensor<96xf32>) outs(%{{.*}} : tensor<8x96xf32>)
// VEC-LABEL: func.func @after_global_pool(
// VEC:         arith.mulf %{{.*}}, %{{.*}} : vector<1x32xf32>
#in6 = affine_map<(n, c, h, w, kh, kw) -> (n, c, h + kh, w + kw)>
#out6 = affine_map<(n, c, h, w, kh, kw) -> (n, c, h, w)>
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan4 = affine_map<(n, c, h, w) -> (0, c, 0, 0)>
func.func @after_global_pool(%x: tensor<8x96x7x7xf32>, %s: tensor<1x96x1x1xf32>) -> tensor<8x96x1x1xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x96x1x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x96x1x1xf32>) -> tensor<8x96x1x1xf32>
  %w = tensor.empty() : tensor<7x7xf32>
  %p = linalg.generic {indexing_maps = [#in6, affine_map<(n, c, h, w, kh, kw) -> (kh, kw)>, #out6],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
       ins(%x, %w : tensor<8x96x7x7xf32>, tensor<7x7xf32>) outs(%f : tensor<8x96x1x1xf32>) {
  ^bb0(%a: f32, %unused: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<8x96x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id4, #chan4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%p, %s : tensor<8x96x1x1xf32>, tensor<1x96x1x1xf32>) outs(%e : tensor<8x96x1x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<8x96x1x1xf32>
  return %r : tensor<8x96x1x1xf32>
}

// -----

// A reduction over a [.., 64, 1] tensor: a linalg.reduce over [7, 64].
// CHECK-LABEL: func.func @reduce_unit(
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<7x64x1xf32> into tensor<7x64xf32>
// CHECK:         linalg.reduce ins(%[[X]] : tensor<7x64xf32>) outs(%{{.*}} : tensor<7xf32>) dimensions = [1]
// VEC-LABEL: func.func @reduce_unit(
// VEC:         vector.reduction <add>, %{{.*}}, %{{.*}} : vector<64xf32> into f32
func.func @reduce_unit(%x: tensor<7x64x1xf32>) -> tensor<7xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<7xf32>) -> tensor<7xf32>
  %r = linalg.reduce ins(%x : tensor<7x64x1xf32>) outs(%f : tensor<7xf32>) dimensions = [1, 2]
    (%a: f32, %o: f32) {
      %t = arith.addf %a, %o : f32
      linalg.yield %t : f32
    }
  return %r : tensor<7xf32>
}

// -----

// Left alone: a matmul's epilogue over its [64, 1] result (applied in the matmul's
// output tile), and a generic reading linalg.index (its body counts the loops).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.matmul
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<64x1xf32>)
// CHECK:         linalg.index 1
// CHECK:         linalg.yield
// CHECK-NEXT:  } -> tensor<64x64x1xf32>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @kept(%a: tensor<64x32xf32>, %b: tensor<32x1xf32>, %bias: tensor<64x1xf32>) -> (tensor<64x1xf32>, tensor<64x64x1xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x1xf32>) -> tensor<64x1xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x1xf32>) outs(%f : tensor<64x1xf32>) -> tensor<64x1xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
       ins(%m, %bias : tensor<64x1xf32>, tensor<64x1xf32>) outs(%e : tensor<64x1xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<64x1xf32>
  %e3 = tensor.empty() : tensor<64x64x1xf32>
  %i = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
       outs(%e3 : tensor<64x64x1xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    linalg.yield %jf : f32
  } -> tensor<64x64x1xf32>
  return %r, %i : tensor<64x1xf32>, tensor<64x64x1xf32>
}
