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

// -----

// The channel panels' result transposed back (codegen/cpu/panels_pass.py): [1, 2, 49, 32]
// -> [1, 2, 32, 49], the collapse merging the panels' dims into 64 channels. The bias
// over those channels is expanded along them ([2, 32, 1]), the residual through the
// same expansion.
// CHECK-DAG:   #[[T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-DAG:   #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @panels_bias_residual_relu(
// CHECK-SAME:      %[[P:.*]]: tensor<1x2x49x32xf32>, %[[B:.*]]: tensor<64x1xf32>, %[[R:.*]]: tensor<1x64x49xf32>)
// CHECK-DAG:     %[[BE:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1], [2]] output_shape [2, 32, 1]
// CHECK-DAG:     %[[RE:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0], [1, 2], [3]] output_shape [1, 2, 32, 49]
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[T]], #[[BIAS]], #[[ID]], #[[ID]]]
// CHECK-SAME:      ins(%[[P]], %[[BE]], %[[RE]] : tensor<1x2x49x32xf32>, tensor<2x32x1xf32>, tensor<1x2x32x49xf32>)
// CHECK:           arith.maximumf
// CHECK:         tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2], [3]] : tensor<1x2x32x49xf32> into tensor<1x64x49xf32>
// CHECK-NOT:     linalg.generic
#transposed = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d1, 0)>
func.func @panels_bias_residual_relu(%p: tensor<1x2x49x32xf32>, %b: tensor<64x1xf32>, %r: tensor<1x64x49xf32>) -> tensor<1x64x49xf32> {
  %e4 = tensor.empty() : tensor<1x2x32x49xf32>
  %t = linalg.generic {indexing_maps = [#transposed, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%p : tensor<1x2x49x32xf32>) outs(%e4 : tensor<1x2x32x49xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x32x49xf32>
  %y = tensor.collapse_shape %t [[0], [1, 2], [3]] : tensor<1x2x32x49xf32> into tensor<1x64x49xf32>
  %e3 = tensor.empty() : tensor<1x64x49xf32>
  %z = linalg.generic {indexing_maps = [#id3, #bias, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%y, %b, %r : tensor<1x64x49xf32>, tensor<64x1xf32>, tensor<1x64x49xf32>) outs(%e3 : tensor<1x64x49xf32>) {
  ^bb0(%v: f32, %bias: f32, %res: f32, %out: f32):
    %0 = arith.addf %v, %bias : f32
    %1 = arith.addf %0, %res : f32
    %c0 = arith.constant 0.0 : f32
    %2 = arith.maximumf %1, %c0 : f32
    linalg.yield %2 : f32
  } -> tensor<1x64x49xf32>
  return %z : tensor<1x64x49xf32>
}

