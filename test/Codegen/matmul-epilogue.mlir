// Matmul epilogues of transformers (codegen/cpu/epilogues.py): a [1, S, D] x [D, F]
// matmul is a 2-D matmul whose result is expanded by a unit dim; its element-wise
// consumer (GELU, a bias, a residual add) is moved before that expansion, over the
// matmul's own [S, F], so that the kernel applies it to the accumulators in registers
// (the plan names it the matmul's epilogue) instead of in a pass of its own. An
// expansion that splits a dim of the result is not: its consumer stays apart.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --stop-after=prepare | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @matmul_gelu
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<32x64xf32>, tensor<64x128xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<32x128xf32>)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:      arith.divf %in
// CHECK:         tensor.expand_shape %[[G]] {{\[}}[0, 1], [2]] output_shape [1, 32, 128]
// PLAN: linalg.matmul [32, 128, 64] matmul {{.*}}'epilogue': 'k{{[0-9]+}}'{{.*}} @matmul_gelu
// PLAN-NOT: linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#scalar3 = affine_map<(d0, d1, d2) -> ()>
func.func @matmul_gelu(%x: tensor<32x64xf32>, %w: tensor<64x128xf32>) -> tensor<1x32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %empty = tensor.empty() : tensor<32x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x128xf32>) -> tensor<32x128xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x128xf32>) outs(%init : tensor<32x128xf32>) -> tensor<32x128xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [1, 32, 128] : tensor<32x128xf32> into tensor<1x32x128xf32>
  %out = tensor.empty() : tensor<1x32x128xf32>
  %g = linalg.generic {indexing_maps = [#id3, #scalar3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %sqrt2 : tensor<1x32x128xf32>, tensor<f32>) outs(%out : tensor<1x32x128xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %q = arith.divf %in, %s : f32
    %e = math.erf %q : f32
    %p = arith.addf %e, %one : f32
    %m = arith.mulf %in, %p : f32
    %z = arith.mulf %m, %half : f32
    linalg.yield %z : f32
  } -> tensor<1x32x128xf32>
  return %g : tensor<1x32x128xf32>
}

// A bias along F reads along the matmul's columns; a residual of the expanded shape is
// collapsed like the result.
// CHECK-LABEL: func.func @matmul_bias_residual
// CHECK:         %[[MM:.*]] = linalg.matmul
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x32x64xf32> into tensor<32x64xf32>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}}, %[[R]] : tensor<32x64xf32>, tensor<64xf32>, tensor<32x64xf32>)
// CHECK:         tensor.expand_shape %[[G]] {{\[}}[0, 1], [2]] output_shape [1, 32, 64]
// PLAN: linalg.matmul [32, 64, 64] matmul {{.*}}'epilogue': 'k{{[0-9]+}}'{{.*}} @matmul_bias_residual
// PLAN-NOT: linalg.generic
#cols = affine_map<(d0, d1, d2) -> (d2)>
func.func @matmul_bias_residual(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %r: tensor<1x32x64xf32>) -> tensor<1x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%init : tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [1, 32, 64] : tensor<32x64xf32> into tensor<1x32x64xf32>
  %out = tensor.empty() : tensor<1x32x64xf32>
  %g = linalg.generic {indexing_maps = [#id3, #cols, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %b, %r : tensor<1x32x64xf32>, tensor<64xf32>, tensor<1x32x64xf32>) outs(%out : tensor<1x32x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %o: f32):
    %s = arith.addf %in, %bias : f32
    %t = arith.addf %s, %res : f32
    linalg.yield %t : f32
  } -> tensor<1x32x64xf32>
  return %g : tensor<1x32x64xf32>
}

// Splitting the rows ([32, 64] -> [2, 16, 64]) is no unit-dim expansion: the consumer
// is scheduled apart.
// CHECK-LABEL: func.func @matmul_split_rows
// CHECK:         %[[MM:.*]] = linalg.matmul
// CHECK:         %[[Y:.*]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [2, 16, 64]
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : tensor<2x16x64xf32>)
// PLAN: linalg.matmul [32, 64, 64] matmul {{.*}} @matmul_split_rows
// PLAN-NOT: 'epilogue'
// PLAN: linalg.generic [2, 16, 64] {{.*}} @matmul_split_rows
func.func @matmul_split_rows(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%init : tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 16, 64] : tensor<32x64xf32> into tensor<2x16x64xf32>
  %out = tensor.empty() : tensor<2x16x64xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<2x16x64xf32>) outs(%out : tensor<2x16x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %zero2 = arith.constant 0.0 : f32
    %relu = arith.maximumf %in, %zero2 : f32
    linalg.yield %relu : f32
  } -> tensor<2x16x64xf32>
  return %g : tensor<2x16x64xf32>
}
