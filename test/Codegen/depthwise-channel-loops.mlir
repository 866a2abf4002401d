// Depthwise convolutions (codegen/cpu/depthwise.py): instead of a zero-padded copy of the
// whole input, the taps and the epilogue as three passes over memory, a loop over blocks
// of channels (what the threads share) and, within a block, over its channels; each
// channel is copied into a plane filled once per block (in the first-level cache, carried
// by the block's loop: the border never changes), and one generic computes its taps with the element-wise
// consumer (bias, ReLU6) in its body. A wide horizontally strided window writes the
// channel's phases straight into a filled buffer, its left padding rounded up to a whole
// phase column (one more zero column, skipped by every tap: tap kw reads phase
// (kw + 1) % 2 from column (kw + 1) / 2).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// CHECK-LABEL: func.func @depthwise_relu6(
// CHECK-NOT:     tensor.pad
// CHECK:         scf.forall (%[[B:.*]]) in (16) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<1x32x14x14xf32>)
// CHECK:           %[[FIRST:.*]] = arith.muli %[[B]], %c2
// CHECK:           %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x16x16xf32>)
// CHECK:           scf.for %[[LOCAL:.*]] = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}, %[[PLANE:.*]] = %[[FILLED]]) -> (tensor<1x2x14x14xf32>, tensor<1x1x16x16xf32>)
// CHECK:             %[[C:.*]] = arith.addi %[[FIRST]], %[[LOCAL]]
// CHECK-NOT:         linalg.fill
// CHECK:             %[[X:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0, 0] [1, 1, 14, 14]
// CHECK:             %[[PADDED:.*]] = tensor.insert_slice %[[X]] into %[[PLANE]][0, 0, 1, 1] [1, 1, 14, 14]
// CHECK:             tensor.extract_slice %[[PADDED]][0, 0, 0, 0] [1, 1, 14, 14] [1, 1, 1, 1]
// CHECK:             tensor.extract_slice %[[PADDED]][0, 0, 2, 2] [1, 1, 14, 14] [1, 1, 1, 1]
// CHECK:             linalg.generic
// CHECK:               arith.maximumf
// CHECK:               arith.minimumf
// CHECK:             } -> tensor<1x1x14x14xf32>
// CHECK:             scf.yield %{{.*}}, %[[PADDED]]
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[ACC]][0, %[[FIRST]], 0, 0] [1, 2, 14, 14]
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
// CHECK-NOT:     linalg.generic
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#identity = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @depthwise_relu6(%x: tensor<1x32x14x14xf32>, %k: tensor<32x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x14x14xf32> {
  %z = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x32x14x14xf32> to tensor<1x32x16x16xf32>
  %e = tensor.empty() : tensor<1x32x14x14xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %k : tensor<1x32x16x16xf32>, tensor<32x3x3xf32>) outs(%f : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %r = linalg.generic {indexing_maps = [#identity, #bias, #identity], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b : tensor<1x32x14x14xf32>, tensor<32xf32>) outs(%e : tensor<1x32x14x14xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %lo = arith.maximumf %s, %z : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x32x14x14xf32>
  return %r : tensor<1x32x14x14xf32>
}

// -----

// CHECK-LABEL: func.func @depthwise_stride_2(
// CHECK-NOT:     tensor.pad
// CHECK:         scf.forall (%[[C:.*]]) in (6)
// CHECK:           %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x42x2x21xf32>)
// CHECK:           %[[X:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0, 0] [1, 1, 40, 40]
// CHECK:           %[[INNER:.*]] = tensor.extract_slice %[[FILLED]][0, 0, 1, 0, 1] [1, 1, 40, 2, 20]
// CHECK:           %[[PAIRS:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 1, 40, 20, 2]
// CHECK:           %[[SPLIT:.*]] = linalg.generic {{.*}} ins(%[[PAIRS]] : tensor<1x1x40x20x2xf32>) outs(%[[INNER]] : tensor<1x1x40x2x20xf32>)
// CHECK:           %[[PHASES:.*]] = tensor.insert_slice %[[SPLIT]] into %[[FILLED]][0, 0, 1, 0, 1] [1, 1, 40, 2, 20]
// CHECK-DAG:       tensor.extract_slice %[[PHASES]][0, 0, 0, 1, 0] [1, 1, 20, 1, 20] [1, 1, 2, 1, 1]
// CHECK-DAG:       tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 1] [1, 1, 20, 1, 20] [1, 1, 2, 1, 1]
// CHECK-DAG:       tensor.extract_slice %[[PHASES]][0, 0, 2, 1, 1] [1, 1, 20, 1, 20] [1, 1, 2, 1, 1]
// CHECK:           linalg.generic
// CHECK:           tensor.parallel_insert_slice
func.func @depthwise_stride_2(%x: tensor<1x6x40x40xf32>, %k: tensor<6x3x3xf32>) -> tensor<1x6x20x20xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k2: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x6x40x40xf32> to tensor<1x6x42x42xf32>
  %e = tensor.empty() : tensor<1x6x20x20xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x20x20xf32>) -> tensor<1x6x20x20xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %k : tensor<1x6x42x42xf32>, tensor<6x3x3xf32>) outs(%f : tensor<1x6x20x20xf32>) -> tensor<1x6x20x20xf32>
  return %y : tensor<1x6x20x20xf32>
}

// -----

// Two depthwise convolutions accumulated (a depthwise 3-d one's depth taps, the second
// starting from the first's result): each channel's taps start from the carried
// accumulator, the forall's own slice, not from a slice of the init read beside it (a
// copy of every channel in and out of a buffer of its own).
// CHECK-LABEL: func.func @depthwise_accumulated(
// CHECK:         %[[FIRST:.*]] = scf.forall
// CHECK:         scf.forall (%[[C:.*]]) in (16) shared_outs(%[[ACC:.*]] = %[[FIRST]]) -> (tensor<1x16x20x24xf32>)
// CHECK:           %[[OUT:.*]] = tensor.extract_slice %[[ACC]][0, %[[C]], 0, 0] [1, 1, 20, 24]
// CHECK-NOT:       tensor.extract_slice %[[FIRST]]
// CHECK:           linalg.generic {{.*}} outs(%[[OUT]] : tensor<1x1x20x24xf32>)
func.func @depthwise_accumulated(%x: tensor<1x16x44x26xf32>, %k0: tensor<16x3x3xf32>, %k1: tensor<16x3x3xf32>) -> tensor<1x16x20x24xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x20x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x20x24xf32>) -> tensor<1x16x20x24xf32>
  %x0 = tensor.extract_slice %x[0, 0, 0, 0] [1, 16, 22, 26] [1, 1, 1, 1] : tensor<1x16x44x26xf32> to tensor<1x16x22x26xf32>
  %y0 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x0, %k0 : tensor<1x16x22x26xf32>, tensor<16x3x3xf32>) outs(%f : tensor<1x16x20x24xf32>) -> tensor<1x16x20x24xf32>
  %x1 = tensor.extract_slice %x[0, 0, 22, 0] [1, 16, 22, 26] [1, 1, 1, 1] : tensor<1x16x44x26xf32> to tensor<1x16x22x26xf32>
  %y1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x1, %k1 : tensor<1x16x22x26xf32>, tensor<16x3x3xf32>) outs(%y0 : tensor<1x16x20x24xf32>) -> tensor<1x16x20x24xf32>
  return %y1 : tensor<1x16x20x24xf32>
}
