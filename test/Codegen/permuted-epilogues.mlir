// An element-wise consumer of a collapsed transposing copy (Winograd's output transform,
// codegen/cpu/permuted_epilogues.py) becomes the copy: one generic over the copy's loops
// reads the copy's input transposed, the bias over a dim the collapse keeps whole as it
// was, the residual through the same expansion, and writes the output once. (Upstream's
// fusion by expansion leaves this case: the bias is read as [K, 1, 1] with constant indices.)
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare | FileCheck %s

// CHECK-LABEL: func.func @transpose_bias_residual_relu(
// CHECK-SAME:      %[[P:.*]]: tensor<1x8x2x4x4x3xf32>, %[[B:.*]]: tensor<8x1x1xf32>, %[[R:.*]]: tensor<1x8x8x12xf32>)
// CHECK:         %[[RE:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1], [2, 3], [4, 5]] output_shape [1, 8, 2, 4, 3, 4]
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[T:.*]], #[[BIAS:.*]], #[[ID:.*]], #[[ID]]]
// CHECK-SAME:      ins(%[[P]], %[[B]], %[[RE]] : tensor<1x8x2x4x4x3xf32>, tensor<8x1x1xf32>, tensor<1x8x2x4x3x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         tensor.collapse_shape %[[Y]] {{\[\[}}0], [1], [2, 3], [4, 5]] : tensor<1x8x2x4x3x4xf32> into tensor<1x8x8x12xf32>
// CHECK-NOT:     linalg.generic
#transposed = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5, d4)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @transpose_bias_residual_relu(%p: tensor<1x8x2x4x4x3xf32>, %b: tensor<8x1x1xf32>, %r: tensor<1x8x8x12xf32>) -> tensor<1x8x8x12xf32> {
  %e6 = tensor.empty() : tensor<1x8x2x4x3x4xf32>
  %t = linalg.generic {indexing_maps = [#transposed, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
       ins(%p : tensor<1x8x2x4x4x3xf32>) outs(%e6 : tensor<1x8x2x4x3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x2x4x3x4xf32>
  %y = tensor.collapse_shape %t [[0], [1], [2, 3], [4, 5]] : tensor<1x8x2x4x3x4xf32> into tensor<1x8x8x12xf32>
  %e4 = tensor.empty() : tensor<1x8x8x12xf32>
  %z = linalg.generic {indexing_maps = [#id4, #bias, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b, %r : tensor<1x8x8x12xf32>, tensor<8x1x1xf32>, tensor<1x8x8x12xf32>) outs(%e4 : tensor<1x8x8x12xf32>) {
  ^bb0(%v: f32, %bias: f32, %res: f32, %out: f32):
    %0 = arith.addf %v, %bias : f32
    %1 = arith.addf %0, %res : f32
    %c0 = arith.constant 0.0 : f32
    %2 = arith.maximumf %1, %c0 : f32
    linalg.yield %2 : f32
  } -> tensor<1x8x8x12xf32>
  return %z : tensor<1x8x8x12xf32>
}
