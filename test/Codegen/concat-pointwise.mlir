// A per-channel element-wise op over a channel concat computed piece by piece
// (codegen/cpu/concat_pointwise.py): each piece one generic over its planes (one row per
// channel) whose results are the op's value and, when the concat is used otherwise too,
// the piece itself, written into slices of two allocations (bufferized in place: one
// pass over each piece instead of a copy of the concat and a pass over it). An op reading
// the concat with another image operand (a residual) is left alone.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v3 --stop-after=bufferize | FileCheck %s --check-prefix=BUF
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @concat_kept(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<1x6x7x9xf32>, %[[B:[^:]*]]: tensor<1x2x7x9xf32>, %[[S:[^:]*]]: tensor<8xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         %[[Y:.*]] = bufferization.alloc_tensor() : tensor<1x8x7x9xf32>
// CHECK:         %[[CAT:.*]] = bufferization.alloc_tensor() : tensor<1x8x7x9xf32>
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[S]][0] [6] [1]
// CHECK:         %[[A2:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0], [1], [2, 3]] : tensor<1x6x7x9xf32> into tensor<1x6x63xf32>
// CHECK:         %[[P0:.*]]:2 = linalg.generic {{.*}} ins(%[[A2]], %[[S0]] : tensor<1x6x63xf32>, tensor<6xf32>) outs({{.*}} : tensor<1x6x63xf32>, tensor<1x6x63xf32>)
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK:         %[[Y0:.*]] = tensor.insert_slice %{{.*}} into %[[Y]][0, 0, 0, 0] [1, 6, 7, 9]
// CHECK:         %[[CAT0:.*]] = tensor.insert_slice %{{.*}} into %[[CAT]][0, 0, 0, 0] [1, 6, 7, 9]
// CHECK:         tensor.extract_slice %[[S]][6] [2] [1]
// CHECK:         linalg.generic {{.*}} outs({{.*}} : tensor<1x2x63xf32>, tensor<1x2x63xf32>)
// CHECK:         %[[Y1:.*]] = tensor.insert_slice %{{.*}} into %[[Y0]][0, 6, 0, 0] [1, 2, 7, 9]
// CHECK:         %[[CAT1:.*]] = tensor.insert_slice %{{.*}} into %[[CAT0]][0, 6, 0, 0] [1, 2, 7, 9]
// CHECK:         return %[[CAT1]], %[[Y1]]
// BUF-LABEL: func.func @concat_kept(
// BUF-NOT:     memref.alloc
// BUF:         return
// PLAN: linalg.generic [1, 6, 63] vectorized {{.*}} @concat_kept
// PLAN-NEXT: linalg.generic [1, 2, 63] vectorized {{.*}} @concat_kept
func.func @concat_kept(%a: tensor<1x6x7x9xf32>, %b: tensor<1x2x7x9xf32>, %s: tensor<8xf32>) -> (tensor<1x8x7x9xf32>, tensor<1x8x7x9xf32>) {
  %z = arith.constant 0.0 : f32
  %cat = tensor.concat dim(1) %a, %b : (tensor<1x6x7x9xf32>, tensor<1x2x7x9xf32>) -> tensor<1x8x7x9xf32>
  %e = tensor.empty() : tensor<1x8x7x9xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cat, %s : tensor<1x8x7x9xf32>, tensor<8xf32>) outs(%e : tensor<1x8x7x9xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %m = arith.mulf %in, %sc : f32
    %r = arith.maximumf %m, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x8x7x9xf32>
  return %cat, %y : tensor<1x8x7x9xf32>, tensor<1x8x7x9xf32>
}


// -----

// CHECK-LABEL: func.func @concat_not_kept(
// CHECK-NOT:     tensor.concat
// CHECK:         %[[Y:.*]] = bufferization.alloc_tensor() : tensor<1x8x7x9xf32>
// CHECK-NOT:     bufferization.alloc_tensor
// CHECK:         %[[G0:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x63xf32>)
// CHECK:         %[[Y0:.*]] = tensor.insert_slice %{{.*}} into %[[Y]][0, 0, 0, 0] [1, 6, 7, 9]
// CHECK:         %[[G1:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x63xf32>)
// CHECK:         %[[Y1:.*]] = tensor.insert_slice %{{.*}} into %[[Y0]][0, 6, 0, 0] [1, 2, 7, 9]
// CHECK:         return %[[Y1]]
// BUF-LABEL: func.func @concat_not_kept(
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @concat_not_kept(%a: tensor<1x6x7x9xf32>, %b: tensor<1x2x7x9xf32>) -> tensor<1x8x7x9xf32> {
  %z = arith.constant 0.0 : f32
  %cat = tensor.concat dim(1) %a, %b : (tensor<1x6x7x9xf32>, tensor<1x2x7x9xf32>) -> tensor<1x8x7x9xf32>
  %e = tensor.empty() : tensor<1x8x7x9xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cat : tensor<1x8x7x9xf32>) outs(%e : tensor<1x8x7x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x8x7x9xf32>
  return %y : tensor<1x8x7x9xf32>
}


// -----

// A concat of three pieces as ECG writes it, a chain of binary concats (the inner one read
// by the outer alone): every piece is a piece of the op, the inner concat never built.
// CHECK-LABEL: func.func @concat_chain(
// CHECK-NOT:     tensor.concat
// CHECK:         %[[Y:.*]] = bufferization.alloc_tensor() : tensor<1x9x7x9xf32>
// CHECK-NOT:     bufferization.alloc_tensor
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x63xf32>)
// CHECK:         %[[Y0:.*]] = tensor.insert_slice %{{.*}} into %[[Y]][0, 0, 0, 0] [1, 6, 7, 9]
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x63xf32>)
// CHECK:         %[[Y1:.*]] = tensor.insert_slice %{{.*}} into %[[Y0]][0, 6, 0, 0] [1, 2, 7, 9]
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x63xf32>)
// CHECK:         %[[Y2:.*]] = tensor.insert_slice %{{.*}} into %[[Y1]][0, 8, 0, 0] [1, 1, 7, 9]
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[Y2]]
// BUF-LABEL: func.func @concat_chain(
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @concat_chain(%a: tensor<1x6x7x9xf32>, %b: tensor<1x2x7x9xf32>, %c: tensor<1x1x7x9xf32>) -> tensor<1x9x7x9xf32> {
  %z = arith.constant 0.0 : f32
  %ab = tensor.concat dim(1) %a, %b : (tensor<1x6x7x9xf32>, tensor<1x2x7x9xf32>) -> tensor<1x8x7x9xf32>
  %cat = tensor.concat dim(1) %ab, %c : (tensor<1x8x7x9xf32>, tensor<1x1x7x9xf32>) -> tensor<1x9x7x9xf32>
  %e = tensor.empty() : tensor<1x9x7x9xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cat : tensor<1x9x7x9xf32>) outs(%e : tensor<1x9x7x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x9x7x9xf32>
  return %y : tensor<1x9x7x9xf32>
}

// -----

// CHECK-LABEL: func.func @concat_residual_kept_whole(
// CHECK:         %[[CAT:.*]] = tensor.concat dim(1)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[CAT]]
// CHECK:         linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x8x63xf32>, tensor<1x8x63xf32>)
// CHECK-NOT:     bufferization.alloc_tensor
func.func @concat_residual_kept_whole(%a: tensor<1x6x7x9xf32>, %b: tensor<1x2x7x9xf32>, %r: tensor<1x8x7x9xf32>) -> tensor<1x8x7x9xf32> {
  %cat = tensor.concat dim(1) %a, %b : (tensor<1x6x7x9xf32>, tensor<1x2x7x9xf32>) -> tensor<1x8x7x9xf32>
  %e = tensor.empty() : tensor<1x8x7x9xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cat, %r : tensor<1x8x7x9xf32>, tensor<1x8x7x9xf32>) outs(%e : tensor<1x8x7x9xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<1x8x7x9xf32>
  return %y : tensor<1x8x7x9xf32>
}
