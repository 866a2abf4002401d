// Sliced matmuls (codegen/cpu/sliced_matmuls.py, in dnnf-codegen-prepare): a merged 1x1
// convolution read only in slices of channels is computed slice by slice, each part a
// matmul of its weight rows with its bias (and a ReLU the slice alone gets) in its
// epilogue, written straight into its result; not where K times the extra parts
// outnumbers the rows (B read again per part would cost more than the copies).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// CHECK-LABEL: func.func @branch_beside_shortcut
// CHECK:         %[[W:.*]] = tensor.collapse_shape %{{.*}} : tensor<32x8x1x1xf32> into tensor<32x8xf32>
// CHECK:         %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0] [8, 8] [1, 1]
// CHECK:         %[[M0:.*]] = linalg.matmul ins(%[[W0]], %{{.*}} : tensor<8x8xf32>, tensor<8x32xf32>)
// CHECK:         %[[B0:.*]] = tensor.extract_slice %{{.*}}[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
// CHECK:         %[[E0:.*]] = linalg.generic {{.*}} ins(%[[M0]], %[[B0]] :
// CHECK:           arith.addf
// CHECK-NEXT:      arith.maximumf
// CHECK:         %[[R0:.*]] = tensor.expand_shape %[[E0]] {{.*}} into tensor<1x8x4x8xf32>
// CHECK:         %[[W1:.*]] = tensor.extract_slice %[[W]][8, 0] [24, 8] [1, 1]
// CHECK:         %[[M1:.*]] = linalg.matmul ins(%[[W1]], %{{.*}} : tensor<24x8xf32>, tensor<8x32xf32>)
// CHECK:         %[[B1:.*]] = tensor.extract_slice %{{.*}}[8] [24] [1] : tensor<32xf32> to tensor<24xf32>
// CHECK:         %[[E1:.*]] = linalg.generic {{.*}} ins(%[[M1]], %[[B1]] :
// CHECK:           arith.addf
// CHECK-NOT:       arith.maximumf
// CHECK:         %[[R1:.*]] = tensor.expand_shape %[[E1]] {{.*}} into tensor<1x24x4x8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R0]], %[[R1]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @branch_beside_shortcut(%x: tensor<1x8x4x8xf32>, %wt: tensor<32x8x1x1xf32>, %b: tensor<32xf32>) -> (tensor<1x8x4x8xf32>, tensor<1x24x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x32x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x32x4x8xf32>) -> tensor<1x32x4x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %wt : tensor<1x8x4x8xf32>, tensor<32x8x1x1xf32>) outs(%acc : tensor<1x32x4x8xf32>) -> tensor<1x32x4x8xf32>
  %b3 = tensor.expand_shape %b [[0, 1, 2]] output_shape [32, 1, 1] : tensor<32xf32> into tensor<32x1x1xf32>
  %biased = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b3 : tensor<1x32x4x8xf32>, tensor<32x1x1xf32>) outs(%init : tensor<1x32x4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x32x4x8xf32>
  %s0 = tensor.extract_slice %biased[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x32x4x8xf32> to tensor<1x8x4x8xf32>
  %e0 = tensor.empty() : tensor<1x8x4x8xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<1x8x4x8xf32>) outs(%e0 : tensor<1x8x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x4x8xf32>
  %s1 = tensor.extract_slice %biased[0, 8, 0, 0] [1, 24, 4, 8] [1, 1, 1, 1] : tensor<1x32x4x8xf32> to tensor<1x24x4x8xf32>
  return %r0, %s1 : tensor<1x8x4x8xf32>, tensor<1x24x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @long_k
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x32xf32>, tensor<32x32xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 8, 4, 8]
// CHECK:         tensor.extract_slice %{{.*}}[0, 8, 0, 0] [1, 8, 4, 8]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @long_k(%x: tensor<1x32x4x8xf32>, %wt: tensor<16x32x1x1xf32>, %b: tensor<16xf32>) -> (tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x16x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x16x4x8xf32>) -> tensor<1x16x4x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %wt : tensor<1x32x4x8xf32>, tensor<16x32x1x1xf32>) outs(%acc : tensor<1x16x4x8xf32>) -> tensor<1x16x4x8xf32>
  %b3 = tensor.expand_shape %b [[0, 1, 2]] output_shape [16, 1, 1] : tensor<16xf32> into tensor<16x1x1xf32>
  %biased = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b3 : tensor<1x16x4x8xf32>, tensor<16x1x1xf32>) outs(%init : tensor<1x16x4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x16x4x8xf32>
  %s0 = tensor.extract_slice %biased[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x16x4x8xf32> to tensor<1x8x4x8xf32>
  %e0 = tensor.empty() : tensor<1x8x4x8xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<1x8x4x8xf32>) outs(%e0 : tensor<1x8x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x4x8xf32>
  %s1 = tensor.extract_slice %biased[0, 8, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : tensor<1x16x4x8xf32> to tensor<1x8x4x8xf32>
  return %r0, %s1 : tensor<1x8x4x8xf32>, tensor<1x8x4x8xf32>
}
