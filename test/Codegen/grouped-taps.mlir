// Grouped convolutions of few channels per group (codegen/cpu/grouped.py): blocks of
// groups shared by the threads (an scf.forall), within a block a loop over its groups
// whose zero plane is filled once and carried (each group copies its channels into the
// interior; its padding, folded away, is the plane's border), one generic over the
// window's taps (a slice of the plane along every input channel, the input channels its
// reduction loop, marked for its schedule) over the output width rounded up to whole
// vectors (16 on AVX-512), and the element-wise consumer (bias, ReLU) rebuilt over the
// group's channels. A single image's 1x1 ones stay one batch_matmul; groups of more
// than 16 channels stay a loop of dense convolutions.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s

// CHECK-LABEL: func.func @grouped_bias_relu(
// CHECK-NOT:     tensor.pad
// CHECK:         %[[OUT:.*]] = scf.forall (%[[B:.*]]) in (16) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<1x32x2x6x6xf32>)
// CHECK:           %[[FIRST:.*]] = arith.muli %[[B]], %c2
// CHECK:           %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x8x18xf32>)
// CHECK:           scf.for %[[LOCAL:.*]] = %c0 to %c2 step %c1 iter_args(%[[T:.*]] = %{{.*}}, %[[PLANE:.*]] = %[[ZERO]]) -> (tensor<1x2x2x6x6xf32>, tensor<1x1x2x8x18xf32>)
// CHECK:             %[[G:.*]] = arith.addi %[[FIRST]], %[[LOCAL]]
// CHECK:             %[[X:.*]] = tensor.extract_slice %arg0[0, %[[G]], 0, 0, 0] [1, 1, 2, 6, 6]
// CHECK:             %[[PADDED:.*]] = tensor.insert_slice %[[X]] into %[[PLANE]][0, 0, 0, 1, 1] [1, 1, 2, 6, 6]
// CHECK:             %[[W:.*]] = tensor.extract_slice %arg1[%[[G]], 0, 0, 0, 0] [1, 2, 2, 3, 3]
// CHECK:             tensor.extract_slice %[[PADDED]][0, 0, 0, 0, 0] [1, 1, 2, 6, 16] [1, 1, 1, 1, 1]
// CHECK:             tensor.extract_slice %[[W]][0, 0, 0, 0, 0] [1, 2, 2, 1, 1]
// CHECK:             tensor.extract_slice %[[PADDED]][0, 0, 0, 2, 2] [1, 1, 2, 6, 16] [1, 1, 1, 1, 1]
// CHECK:             %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x6x16xf32>)
// CHECK:             %[[SUM:.*]] = linalg.generic
// CHECK-SAME:          iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel"]
// CHECK-SAME:          outs(%[[INIT]] : tensor<1x1x2x6x16xf32>) attrs =  {dnnf.grouped_taps}
// CHECK-COUNT-9:       math.fma
// CHECK:             } -> tensor<1x1x2x6x16xf32>
// CHECK:             %[[C:.*]] = arith.muli %[[G]], %c2
// CHECK:             %[[BIAS:.*]] = tensor.extract_slice %arg2[%[[C]], 0, 0] [2, 1, 1]
// CHECK:             %[[Y:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %[[BIAS]] : tensor<1x1x2x6x16xf32>, tensor<2x1x1xf32>)
// CHECK:               arith.addf
// CHECK:               arith.maximumf
// CHECK:             %[[NARROW:.*]] = tensor.extract_slice %[[Y]][0, 0, 0, 0, 0] [1, 1, 2, 6, 6]
// CHECK:             %[[INTO:.*]] = tensor.insert_slice %[[NARROW]] into %[[T]][0, %[[LOCAL]], 0, 0, 0] [1, 1, 2, 6, 6]
// CHECK:             scf.yield %[[INTO]], %[[PADDED]]
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[ACC]][0, %[[FIRST]], 0, 0, 0] [1, 2, 2, 6, 6]
// CHECK:         tensor.collapse_shape %[[OUT]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x32x2x6x6xf32> into tensor<1x64x6x6xf32>
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw

func.func @grouped_bias_relu(%x: tensor<1x32x2x6x6xf32>, %w: tensor<32x2x2x3x3xf32>, %b: tensor<64x1x1xf32>) -> tensor<1x64x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x32x2x6x6xf32> to tensor<1x32x2x8x8xf32>
  %e = tensor.empty() : tensor<1x32x2x6x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x2x6x6xf32>) -> tensor<1x32x2x6x6xf32>
  %conv = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%padded, %w : tensor<1x32x2x8x8xf32>, tensor<32x2x2x3x3xf32>) outs(%init : tensor<1x32x2x6x6xf32>) -> tensor<1x32x2x6x6xf32>
  %c = tensor.collapse_shape %conv [[0], [1, 2], [3], [4]] : tensor<1x32x2x6x6xf32> into tensor<1x64x6x6xf32>
  %o = tensor.empty() : tensor<1x64x6x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c, 0, 0)>,
                                        affine_map<(n, c, h, w) -> (n, c, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<1x64x6x6xf32>, tensor<64x1x1xf32>) outs(%o : tensor<1x64x6x6xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x64x6x6xf32>
  return %y : tensor<1x64x6x6xf32>
}


// -----

// A 3x3/2: the plane has the columns 16 strided output columns read ((16 - 1) * 2 + 3),
// the taps are slices of stride 2 in both image dims; no epilogue: the result is the
// groups' loop's.
// CHECK-LABEL: func.func @grouped_strided(
// CHECK:         %[[OUT:.*]] = scf.forall (%[[G:.*]]) in (2)
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x5x33xf32>)
// CHECK:           %[[PADDED:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0, 0] [1, 1, 2, 5, 20]
// CHECK:           tensor.extract_slice %[[PADDED]][0, 0, 0, 2, 2] [1, 1, 2, 2, 16] [1, 1, 1, 2, 2]
// CHECK:           linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x3x2x16xf32>) attrs =  {dnnf.grouped_taps}
// CHECK:           tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %[[G]], 0, 0, 0] [1, 1, 3, 2, 9]
// CHECK:         return %[[OUT]] : tensor<1x2x3x2x9xf32>

func.func @grouped_strided(%x: tensor<1x2x2x5x20xf32>, %w: tensor<2x3x2x3x3xf32>) -> tensor<1x2x3x2x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x2x9xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x2x9xf32>) -> tensor<1x2x3x2x9xf32>
  %conv = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
          ins(%x, %w : tensor<1x2x2x5x20xf32>, tensor<2x3x2x3x3xf32>) outs(%init : tensor<1x2x3x2x9xf32>) -> tensor<1x2x3x2x9xf32>
  return %conv : tensor<1x2x3x2x9xf32>
}


// -----

// CHECK-LABEL: func.func @grouped_1x1(
// CHECK-NOT:     dnnf.grouped_taps
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x6x6xf32>, tensor<4x6x49xf32>)

func.func @grouped_1x1(%x: tensor<1x4x6x7x7xf32>, %w: tensor<4x6x6x1x1xf32>) -> tensor<1x4x6x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x7x7xf32>) -> tensor<1x4x6x7x7xf32>
  %conv = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x4x6x7x7xf32>, tensor<4x6x6x1x1xf32>) outs(%init : tensor<1x4x6x7x7xf32>) -> tensor<1x4x6x7x7xf32>
  return %conv : tensor<1x4x6x7x7xf32>
}


// -----

// Wide groups keep a loop of dense convolutions; the fill of the accumulator is done
// in the loop, per group, so the group's convolution takes flat rows (8 rows of 18
// columns computed as one row of 160: its 3 rows of taps accumulated as 3 convolutions).
// CHECK-LABEL: func.func @wide_groups(
// CHECK-NOT:     dnnf.grouped_taps
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<1x2x8x8x16xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         scf.forall (%{{.*}}) in (2) shared_outs(%{{.*}} = %[[EMPTY]])
// CHECK:           %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x1x160xf32>)
// CHECK:           %[[ROW0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x24x1x162xf32>, tensor<8x24x1x3xf32>) outs(%[[INIT]] :
// CHECK:           %[[ROW1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} outs(%[[ROW0]] :
// CHECK:           linalg.conv_2d_nchw_fchw {{.*}} outs(%[[ROW1]] :

func.func @wide_groups(%x: tensor<1x2x24x10x18xf32>, %w: tensor<2x8x24x3x3xf32>) -> tensor<1x2x8x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x8x8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
  %conv = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x2x24x10x18xf32>, tensor<2x8x24x3x3xf32>) outs(%init : tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
  return %conv : tensor<1x2x8x8x16xf32>
}

// -----

// An accumulator that is not a fill (the sum goes on from it): each group's
// convolution starts from its slice of it, and keeps its rows.
// CHECK-LABEL: func.func @wide_groups_accumulating(
// CHECK-SAME:      %{{.*}}: tensor<1x2x24x10x18xf32>, %{{.*}}: tensor<2x8x24x3x3xf32>, %[[ACC:.*]]: tensor<1x2x8x8x16xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         scf.forall (%[[G:.*]]) in (2) shared_outs(%[[SHARED:.*]] = %[[ACC]])
// CHECK:           %[[START:.*]] = tensor.extract_slice %[[SHARED]][0, %[[G]], 0, 0, 0] [1, 1, 8, 8, 16]
// CHECK:           linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x24x10x18xf32>, tensor<8x24x3x3xf32>) outs(%[[START]] : tensor<1x8x8x16xf32>)

func.func @wide_groups_accumulating(%x: tensor<1x2x24x10x18xf32>, %w: tensor<2x8x24x3x3xf32>, %acc: tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32> {
  %conv = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x2x24x10x18xf32>, tensor<2x8x24x3x3xf32>) outs(%acc : tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
  return %conv : tensor<1x2x8x8x16xf32>
}
