// Horizontally strided pooling windows on rows at least a vector wide: computed a
// channel at a time (codegen/cpu/depthwise.py), in one pass where two would not pay
// or not be exact (separable-pools.mlir). An unpadded input whose output row is
// one vector of the row schedule (at most 4 registers) and whose stride-2 taps are read
// contiguously (strided_reads.py) is read in place, with no copy; a padded one is split
// by column phase into a per-channel buffer filled with the pad value, every tap
// then a contiguous read of one phase (tap kw: phase kw % 2, from column kw / 2).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @max_pool_stride_2(
// CHECK-NOT:     tensor.pad
// CHECK:         scf.forall (%[[C:.*]]) in (16)
// CHECK:           %[[X:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0, 0] [1, 1, 113, 113] [1, 1, 1, 1]
// CHECK-DAG:       tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 1, 56, 56] [1, 1, 2, 2]
// CHECK-DAG:       tensor.extract_slice %[[X]][0, 0, 1, 1] [1, 1, 56, 56] [1, 1, 2, 2]
// CHECK:           linalg.generic
// CHECK-NOT:     linalg.pooling_nchw_max
// A row of 56 is 7 AVX2 vectors, more than one read of the row schedule: phases.
// AVX2-LABEL: func.func @max_pool_stride_2(
// AVX2:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 1, 113, 56, 2]
// PLAN: linalg.generic [1, 1, 56, 56] vectorized {'vector': [1, 1, 1, 56]} @max_pool_stride_2
func.func @max_pool_stride_2(%x: tensor<1x16x113x113xf32>) -> tensor<1x16x56x56xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x16x56x56xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %window : tensor<1x16x113x113xf32>, tensor<2x2xf32>) outs(%f : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  return %y : tensor<1x16x56x56xf32>
}

// -----

// ResNet's stem pool's shape, padded by one with zeros (an explicit Pad) on every side:
// a zero can win, so not in two passes (separable-pools.mlir) but over column phases.
// CHECK-LABEL: func.func @max_pool_stride_2_padded(
// CHECK-NOT:     tensor.pad
// CHECK:         scf.forall
// CHECK:           %[[B:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x114x2x57xf32>)
// CHECK:           %[[INNER:.*]] = tensor.extract_slice %[[B]][0, 0, 1, 0, 1] [1, 1, 112, 2, 56]
// CHECK:           %[[S:.*]] = linalg.generic {{.*}} outs(%[[INNER]] : tensor<1x1x112x2x56xf32>)
// CHECK:           %[[P:.*]] = tensor.insert_slice %[[S]] into %[[B]][0, 0, 1, 0, 1]
// CHECK-DAG:       tensor.extract_slice %[[P]][0, 0, 0, 1, 0] [1, 1, 56, 1, 56] [1, 1, 2, 1, 1]
// CHECK-DAG:       tensor.extract_slice %[[P]][0, 0, 2, 1, 1] [1, 1, 56, 1, 56] [1, 1, 2, 1, 1]
// AVX2-LABEL: func.func @max_pool_stride_2_padded(
// AVX2:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x114x2x57xf32>)
// PLAN: linalg.generic [1, 1, 112, 2, 56] vectorized {'vector': [1, 1, 1, 2, 56]} @max_pool_stride_2_padded
func.func @max_pool_stride_2_padded(%x: tensor<1x16x112x112xf32>) -> tensor<1x16x56x56xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x16x112x112xf32> to tensor<1x16x114x114xf32>
  %e = tensor.empty() : tensor<1x16x56x56xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %window : tensor<1x16x114x114xf32>, tensor<3x3xf32>) outs(%f : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  return %y : tensor<1x16x56x56xf32>
}
