// Max and sum pools in two passes (codegen/cpu/separable_pools.py): per channel, the max over
// the window's rows read in place (whole rows, a row stride of 2) into an [OH, W] plane
// whose padding columns are filled with -inf, then the max over the plane's strided
// columns, the pool's epilogue in registers. Rows near a padded edge take fewer taps.
// Sums (average pools) too, padded with zeros. A pad with a value that can win a max
// (0.0), 2x2 and 1-D windows keep the one-pass path.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2

// ResNet-50's stem pool: the first output row's window takes input rows 0 and 1 only.
// CHECK-LABEL: func.func @stem_pool(
// CHECK-NOT:     tensor.pad
// CHECK:         scf.forall (%[[C:.*]]) in (16)
// CHECK:           %[[PLANE:.*]] = tensor.empty() : tensor<1x1x56x113xf32>
// CHECK:           %[[LEFT:.*]] = tensor.extract_slice %[[PLANE]][0, 0, 0, 0] [1, 1, 56, 1]
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[LEFT]] : tensor<1x1x56x1xf32>)
// CHECK:           %[[R0:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0, 0] [1, 1, 1, 112] [1, 1, 2, 1]
// CHECK:           %[[R1:.*]] = tensor.extract_slice %arg0[0, %[[C]], 1, 0] [1, 1, 1, 112] [1, 1, 2, 1]
// CHECK:           linalg.generic {{.*}} ins(%[[R0]], %[[R1]] : {{.*}})
// CHECK-COUNT-1:     arith.maximumf
// CHECK-NEXT:        linalg.yield
// CHECK:           tensor.extract_slice %arg0[0, %[[C]], 1, 0] [1, 1, 55, 112] [1, 1, 2, 1]
// CHECK:           tensor.extract_slice %arg0[0, %[[C]], 3, 0] [1, 1, 55, 112] [1, 1, 2, 1]
// CHECK:           %[[ROWS:.*]] = linalg.generic
// CHECK-COUNT-2:     arith.maximumf
// CHECK-NEXT:        linalg.yield
// CHECK:           %[[P:.*]] = tensor.insert_slice %[[ROWS]] into %{{.*}}[0, 0, 1, 1] [1, 1, 55, 112]
// CHECK-DAG:       tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 1, 56, 56] [1, 1, 1, 2]
// CHECK-DAG:       tensor.extract_slice %[[P]][0, 0, 0, 2] [1, 1, 56, 56] [1, 1, 1, 2]
// CHECK:           linalg.generic
// CHECK-COUNT-2:     arith.maximumf
// CHECK-NEXT:        linalg.yield
// CHECK-NOT:     linalg.pooling_nchw_max
// A row of 56 outputs is 7 AVX2 vectors, more than one read of the row schedule: phases.
// AVX2-LABEL: func.func @stem_pool(
// AVX2:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x114x2x57xf32>)
// AVX2-NOT:     tensor<1x1x56x113xf32>
func.func @stem_pool(%x: tensor<1x16x112x112xf32>) -> tensor<1x16x56x56xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x16x112x112xf32> to tensor<1x16x114x114xf32>
  %e = tensor.empty() : tensor<1x16x56x56xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %window : tensor<1x16x114x114xf32>, tensor<3x3xf32>) outs(%f : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  return %y : tensor<1x16x56x56xf32>
}

// -----

// SqueezeNet's pool: no padding, no fill; odd rows.
// CHECK-LABEL: func.func @unpadded_odd(
// CHECK:         scf.forall (%[[C:.*]]) in (8)
// CHECK-NOT:       linalg.fill
// CHECK:           tensor.extract_slice %arg0[0, %[[C]], 2, 0] [1, 1, 55, 111] [1, 1, 2, 1]
// CHECK:           %[[ROWS:.*]] = linalg.generic
// CHECK-DAG:       tensor.extract_slice %[[ROWS]][0, 0, 0, 0] [1, 1, 55, 55] [1, 1, 1, 2]
// CHECK-DAG:       tensor.extract_slice %[[ROWS]][0, 0, 0, 2] [1, 1, 55, 55] [1, 1, 1, 2]
// CHECK:           linalg.generic
// CHECK-NOT:     linalg.pooling_nchw_max
// AVX2-LABEL: func.func @unpadded_odd(
func.func @unpadded_odd(%x: tensor<1x8x111x111xf32>) -> tensor<1x8x55x55xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x55x55xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x55x55xf32>) -> tensor<1x8x55x55xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %window : tensor<1x8x111x111xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x55x55xf32>) -> tensor<1x8x55x55xf32>
  return %y : tensor<1x8x55x55xf32>
}

// -----

// Inception v2's pool in ceil mode (padded at the end): the last output row takes input
// rows 54 and 55, the plane's last column is filled; on AVX2 too (28 outputs a row).
// CHECK-LABEL: func.func @ceil_mode(
// CHECK:           %[[PLANE:.*]] = tensor.empty() : tensor<1x1x28x57xf32>
// CHECK:           %[[RIGHT:.*]] = tensor.extract_slice %[[PLANE]][0, 0, 0, 56] [1, 1, 28, 1]
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[RIGHT]] : tensor<1x1x28x1xf32>)
// CHECK:           tensor.extract_slice %arg0[0, %{{.*}}, 2, 0] [1, 1, 27, 56] [1, 1, 2, 1]
// CHECK:           linalg.generic
// CHECK:           tensor.extract_slice %arg0[0, %{{.*}}, 54, 0] [1, 1, 1, 56] [1, 1, 2, 1]
// CHECK:           tensor.extract_slice %arg0[0, %{{.*}}, 55, 0] [1, 1, 1, 56] [1, 1, 2, 1]
// CHECK:           linalg.generic
// CHECK-COUNT-1:     arith.maximumf
// CHECK-NEXT:        linalg.yield
// CHECK:           tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 27, 0] [1, 1, 1, 56]
// AVX2-LABEL: func.func @ceil_mode(
// AVX2:           tensor.empty() : tensor<1x1x28x57xf32>
func.func @ceil_mode(%x: tensor<1x8x56x56xf32>) -> tensor<1x8x28x28xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x56x56xf32> to tensor<1x8x57x57xf32>
  %e = tensor.empty() : tensor<1x8x28x28xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %window : tensor<1x8x57x57xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32>
  return %y : tensor<1x8x28x28xf32>
}

// -----

// Padded with zeros (an explicit Pad before the pool): a zero can win over the rows the
// two passes would leave out, so this keeps the one-pass path (phases filled with it).
// CHECK-LABEL: func.func @zero_padded(
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x57x2x29xf32>)
// CHECK-NOT:     tensor<1x1x28x57xf32>
// CHECK:         return
// AVX2-LABEL: func.func @zero_padded(
func.func @zero_padded(%x: tensor<1x8x56x56xf32>) -> tensor<1x8x28x28xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x56x56xf32> to tensor<1x8x57x57xf32>
  %e = tensor.empty() : tensor<1x8x28x28xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %window : tensor<1x8x57x57xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32>
  return %y : tensor<1x8x28x28xf32>
}

// -----

// A window of one row: nothing to split, one pass over the strided columns.
// CHECK-LABEL: func.func @one_row_window(
// CHECK:         scf.forall
// CHECK-COUNT-3:   tensor.extract_slice %{{.*}} [1, 1, 1, 50] [1, 1, 2, 2]
// CHECK:           linalg.generic
// CHECK-NOT:     tensor.empty() : tensor<1x1x1x101xf32>
// AVX2-LABEL: func.func @one_row_window(
func.func @one_row_window(%x: tensor<1x8x1x101xf32>) -> tensor<1x8x1x50xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x1x50xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x1x50xf32>) -> tensor<1x8x1x50xf32>
  %window = tensor.empty() : tensor<1x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %window : tensor<1x8x1x101xf32>, tensor<1x3xf32>) outs(%f : tensor<1x8x1x50xf32>) -> tensor<1x8x1x50xf32>
  return %y : tensor<1x8x1x50xf32>
}

// -----

// Inception's pool branch, an average pool's sum (3x3/1, zeros padding): rows near the
// edges take two taps, the plane's padding columns are zeros; the sum is regrouped.
// CHECK-LABEL: func.func @sum_pool_stride_1(
// CHECK:           %[[PLANE:.*]] = tensor.empty() : tensor<1x1x28x30xf32>
// CHECK:           tensor.extract_slice %[[PLANE]][0, 0, 0, 0] [1, 1, 28, 1]
// CHECK:           tensor.extract_slice %{{.*}}[0, 0, 0, 29] [1, 1, 28, 1]
// CHECK:           tensor.extract_slice %arg0[0, %{{.*}}, 0, 0] [1, 1, 1, 28] [1, 1, 1, 1]
// CHECK:           linalg.generic
// CHECK-COUNT-1:     arith.addf
// CHECK-NEXT:        linalg.yield
// CHECK:           tensor.extract_slice %arg0[0, %{{.*}}, 2, 0] [1, 1, 26, 28] [1, 1, 1, 1]
// CHECK:           linalg.generic
// CHECK-COUNT-2:     arith.addf
// CHECK-NEXT:        linalg.yield
// CHECK:           tensor.extract_slice %arg0[0, %{{.*}}, 27, 0] [1, 1, 1, 28] [1, 1, 1, 1]
// CHECK:           linalg.generic
// CHECK:           linalg.generic
// CHECK-COUNT-2:     arith.addf
// CHECK-NEXT:        linalg.yield
// CHECK-NOT:     linalg.pooling_nchw_sum
// AVX2-LABEL: func.func @sum_pool_stride_1(
// AVX2:           tensor.empty() : tensor<1x1x28x30xf32>
func.func @sum_pool_stride_1(%x: tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x28x28xf32> to tensor<1x8x30x30xf32>
  %e = tensor.empty() : tensor<1x8x28x28xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %window : tensor<1x8x30x30xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32>
  return %y : tensor<1x8x28x28xf32>
}
