// A grouped 1x1 convolution (a batch matmul over the groups, [G, F, P]) whose bias,
// ReLU and residual add read it reshaped into the image [1, G*F, H, W]: the consumer
// moves into the product's shape (codegen/cpu/grouped_epilogues.py), a bias read as
// [G, F], a residual through the same reshapes, and ShuffleNet's channel shuffle after
// it (reshape [1, G, F, H, W], transpose of G and F, reshape back) becomes the
// consumer's output map, (g, f, p) -> (f, g, p): no transpose is left. The schedule
// then makes the consumer (marked dnnf.shuffled_epilogue when it writes the shuffle) the
// batch matmul's epilogue (no pass of its own). A consumer
// reading an operand that varies along the image stays as it was.
// (The splits use distinct map names: the PLAN run reads the file as one module.)
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=1 --emit=schedules | FileCheck %s --check-prefix=PLAN

// PLAN: linalg.batch_matmul [2, 5, 9, 3] matmul {{.*}}'epilogue': {{.*}}@shuffle_bias_relu
// PLAN-NOT: linalg.transpose {{.*}}@shuffle_bias_relu
// PLAN-NOT: linalg.generic {{.*}}@shuffle_bias_relu
// PLAN: linalg.batch_matmul [3, 4, 10, 4] matmul {{.*}}'epilogue': {{.*}}@residual_relu
// PLAN-NOT: linalg.generic {{.*}}@residual_relu
// PLAN: linalg.batch_matmul [2, 5, 9, 3] matmul {'register_tile': (5, 9), 'padded': False} @row_scale
// PLAN: linalg.generic [1, 10, 3, 3] {{.*}}@row_scale

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[GF:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[SWAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @shuffle_bias_relu(
// CHECK-SAME:      %{{.*}}: tensor<1x6x3x3xf32>, %{{.*}}: tensor<10x3x1x1xf32>, %[[B:.*]]: tensor<10x1x1xf32>)
// CHECK:         %[[P:.*]] = linalg.batch_matmul {{.*}} -> tensor<2x5x9xf32>
// CHECK:         %[[BF:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1, 2]] : tensor<10x1x1xf32> into tensor<10xf32>
// CHECK:         %[[BG:.*]] = tensor.expand_shape %[[BF]] {{\[\[}}0, 1]] output_shape [2, 5]
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<5x2x9xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[GF]], #[[SWAP]]]
// CHECK-SAME:      ins(%[[P]], %[[BG]] : tensor<2x5x9xf32>, tensor<2x5xf32>) outs(%[[E]] : tensor<5x2x9xf32>)
// CHECK-SAME:      attrs = {dnnf.shuffled_epilogue}
// CHECK:           arith.maximumf
// CHECK:         tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2], [3, 4]] output_shape [1, 5, 2, 3, 3]
// CHECK-NOT:     linalg.transpose
// CHECK:         return
#sid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sbias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @shuffle_bias_relu(%x: tensor<1x6x3x3xf32>, %w: tensor<10x3x1x1xf32>, %b: tensor<10x1x1xf32>) -> tensor<1x10x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 3, 3] : tensor<1x6x3x3xf32> into tensor<1x2x3x3x3xf32>
  %we = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 5, 3, 1, 1] : tensor<10x3x1x1xf32> into tensor<2x5x3x1x1xf32>
  %e = tensor.empty() : tensor<1x2x5x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x5x3x3xf32>) -> tensor<1x2x5x3x3xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %we : tensor<1x2x3x3x3xf32>, tensor<2x5x3x1x1xf32>) outs(%f : tensor<1x2x5x3x3xf32>) -> tensor<1x2x5x3x3xf32>
  %cc = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x5x3x3xf32> into tensor<1x10x3x3xf32>
  %e4 = tensor.empty() : tensor<1x10x3x3xf32>
  %y = linalg.generic {indexing_maps = [#sid4, #sbias, #sid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cc, %b : tensor<1x10x3x3xf32>, tensor<10x1x1xf32>) outs(%e4 : tensor<1x10x3x3xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %0 = arith.addf %v, %bias : f32
    %1 = arith.maximumf %0, %zero : f32
    linalg.yield %1 : f32
  } -> tensor<1x10x3x3xf32>
  %ye = tensor.expand_shape %y [[0], [1, 2], [3], [4]] output_shape [1, 2, 5, 3, 3] : tensor<1x10x3x3xf32> into tensor<1x2x5x3x3xf32>
  %e5 = tensor.empty() : tensor<1x5x2x3x3xf32>
  %t = linalg.transpose ins(%ye : tensor<1x2x5x3x3xf32>) outs(%e5 : tensor<1x5x2x3x3xf32>) permutation = [0, 2, 1, 3, 4]
  %s = tensor.collapse_shape %t [[0], [1, 2], [3], [4]] : tensor<1x5x2x3x3xf32> into tensor<1x10x3x3xf32>
  return %s : tensor<1x10x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @residual_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<1x12x2x5xf32>, %{{.*}}: tensor<12x4x1x1xf32>)
// CHECK:         %[[P:.*]] = linalg.batch_matmul {{.*}} -> tensor<3x4x10xf32>
// CHECK:         %[[XF:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2, 3]] : tensor<1x12x2x5xf32> into tensor<12x10xf32>
// CHECK:         %[[XG:.*]] = tensor.expand_shape %[[XF]] {{\[\[}}0, 1], [2]] output_shape [3, 4, 10]
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[P]], %[[XG]] : tensor<3x4x10xf32>, tensor<3x4x10xf32>) outs(%{{.*}} : tensor<3x4x10xf32>)
// CHECK:         tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2], [3, 4]] output_shape [1, 3, 4, 2, 5]
#rid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @residual_relu(%x: tensor<1x12x2x5xf32>, %w: tensor<12x4x1x1xf32>) -> tensor<1x12x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 3, 4, 2, 5] : tensor<1x12x2x5xf32> into tensor<1x3x4x2x5xf32>
  %we = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [3, 4, 4, 1, 1] : tensor<12x4x1x1xf32> into tensor<3x4x4x1x1xf32>
  %e = tensor.empty() : tensor<1x3x4x2x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x4x2x5xf32>) -> tensor<1x3x4x2x5xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %we : tensor<1x3x4x2x5xf32>, tensor<3x4x4x1x1xf32>) outs(%f : tensor<1x3x4x2x5xf32>) -> tensor<1x3x4x2x5xf32>
  %cc = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x3x4x2x5xf32> into tensor<1x12x2x5xf32>
  %e4 = tensor.empty() : tensor<1x12x2x5xf32>
  %y = linalg.generic {indexing_maps = [#rid4, #rid4, #rid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cc, %x : tensor<1x12x2x5xf32>, tensor<1x12x2x5xf32>) outs(%e4 : tensor<1x12x2x5xf32>) {
  ^bb0(%v: f32, %r: f32, %out: f32):
    %0 = arith.addf %v, %r : f32
    %1 = arith.maximumf %0, %zero : f32
    linalg.yield %1 : f32
  } -> tensor<1x12x2x5xf32>
  return %y : tensor<1x12x2x5xf32>
}

// -----

// CHECK-LABEL: func.func @row_scale(
// CHECK:         linalg.batch_matmul {{.*}} -> tensor<2x5x9xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<1x10x3x3xf32>)
#wid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#wrow = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
func.func @row_scale(%x: tensor<1x6x3x3xf32>, %w: tensor<10x3x1x1xf32>, %s: tensor<1x1x1x3xf32>) -> tensor<1x10x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 3, 3] : tensor<1x6x3x3xf32> into tensor<1x2x3x3x3xf32>
  %we = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 5, 3, 1, 1] : tensor<10x3x1x1xf32> into tensor<2x5x3x1x1xf32>
  %e = tensor.empty() : tensor<1x2x5x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x5x3x3xf32>) -> tensor<1x2x5x3x3xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %we : tensor<1x2x3x3x3xf32>, tensor<2x5x3x1x1xf32>) outs(%f : tensor<1x2x5x3x3xf32>) -> tensor<1x2x5x3x3xf32>
  %cc = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x5x3x3xf32> into tensor<1x10x3x3xf32>
  %e4 = tensor.empty() : tensor<1x10x3x3xf32>
  %y = linalg.generic {indexing_maps = [#wid4, #wrow, #wid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cc, %s : tensor<1x10x3x3xf32>, tensor<1x1x1x3xf32>) outs(%e4 : tensor<1x10x3x3xf32>) {
  ^bb0(%v: f32, %sc: f32, %out: f32):
    %0 = arith.mulf %v, %sc : f32
    linalg.yield %0 : f32
  } -> tensor<1x10x3x3xf32>
  return %y : tensor<1x10x3x3xf32>
}
