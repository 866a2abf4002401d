// Sliced matmuls (codegen/cpu/sliced_matmuls.py, in dnnf-codegen-prepare): a merged 1x1
// convolution read only in slices of channels is computed slice by slice, each part a
// matmul of its weight rows with its bias (and a ReLU the slice alone gets) in its
// epilogue, written straight into its result; not where K times the extra parts
// outnumbers the rows (B read again per part would cost more than the copies). A loop
// over weight panels read in column slices of whole panels: one loop per slice.
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

// -----

// A loop over weight panels (dnnf-weight-panels) read in column slices of whole
// panels through a bias (BERT's merged Q/K/V): one loop per slice over its own panels
// of the same argument, its bias slice and its transpose to the heads right after it.
// CHECK-LABEL: func.func @merged_qkv
// CHECK-SAME:    %[[P:[^:]*]]: tensor<6x8x8xf32>, %[[B:[^:]*]]: tensor<48xf32>
// CHECK:         %[[X:.*]] = tensor.collapse_shape
// CHECK:         scf.forall (%[[J0:.*]]) in (2)
// CHECK:           tensor.extract_slice %[[P]][%[[J0]], 0, 0] [1, 8, 8]
// CHECK:           linalg.matmul ins(%[[X]], %{{.*}} : tensor<4x8xf32>, tensor<8x8xf32>)
// CHECK:         tensor.extract_slice %[[B]][0] [16] [1]
// CHECK:         linalg.generic
// CHECK:         linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK:         scf.forall (%[[J1:.*]]) in (2)
// CHECK:           %[[I1:.*]] = arith.addi %[[J1]], %c2
// CHECK:           tensor.extract_slice %[[P]][%[[I1]], 0, 0] [1, 8, 8]
// CHECK:         tensor.extract_slice %[[B]][16] [16] [1]
// CHECK:         linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK:         scf.forall (%[[J2:.*]]) in (2)
// CHECK:           %[[I2:.*]] = arith.addi %[[J2]], %c4
// CHECK:           tensor.extract_slice %[[P]][%[[I2]], 0, 0] [1, 8, 8]
// CHECK:         tensor.extract_slice %[[B]][32] [16] [1]
// CHECK:         linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK-NOT:     scf.forall (
// CHECK:         return
func.func @merged_qkv(%x: tensor<1x4x8xf32>, %panels: tensor<6x8x8xf32>, %b: tensor<48xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8 : index
  %empty = tensor.empty() : tensor<4x48xf32>
  %product = scf.forall (%j) in (6) shared_outs(%acc = %empty) -> (tensor<4x48xf32>) {
    %column = arith.muli %j, %c8 : index
    %panel = tensor.extract_slice %panels[%j, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<6x8x8xf32> to tensor<8x8xf32>
    %tile0 = tensor.empty() : tensor<4x8xf32>
    %tile = linalg.fill ins(%zero : f32) outs(%tile0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
    %part = linalg.matmul ins(%rows, %panel : tensor<4x8xf32>, tensor<8x8xf32>) outs(%tile : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %part into %acc[0, %column] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x48xf32>
    }
  }
  %expanded = tensor.expand_shape %product [[0, 1], [2]] output_shape [1, 4, 48] : tensor<4x48xf32> into tensor<1x4x48xf32>
  %init = tensor.empty() : tensor<1x4x48xf32>
  %wide = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>,
                         affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%expanded, %b : tensor<1x4x48xf32>, tensor<48xf32>) outs(%init : tensor<1x4x48xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x4x48xf32>
  %s0 = tensor.extract_slice %wide[0, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<1x4x48xf32> to tensor<1x4x16xf32>
  %h0 = tensor.expand_shape %s0 [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  %e0 = tensor.empty() : tensor<1x2x4x8xf32>
  %t0 = linalg.transpose ins(%h0 : tensor<1x4x2x8xf32>) outs(%e0 : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
  %s1 = tensor.extract_slice %wide[0, 0, 16] [1, 4, 16] [1, 1, 1] : tensor<1x4x48xf32> to tensor<1x4x16xf32>
  %h1 = tensor.expand_shape %s1 [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  %e1 = tensor.empty() : tensor<1x2x8x4xf32>
  %t1 = linalg.transpose ins(%h1 : tensor<1x4x2x8xf32>) outs(%e1 : tensor<1x2x8x4xf32>) permutation = [0, 2, 3, 1]
  %s2 = tensor.extract_slice %wide[0, 0, 32] [1, 4, 16] [1, 1, 1] : tensor<1x4x48xf32> to tensor<1x4x16xf32>
  %h2 = tensor.expand_shape %s2 [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  %e2 = tensor.empty() : tensor<1x2x4x8xf32>
  %t2 = linalg.transpose ins(%h2 : tensor<1x4x2x8xf32>) outs(%e2 : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
  return %t0, %t1, %t2 : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// Slices of 12 columns cut the 8-wide panels: left one loop.
// CHECK-LABEL: func.func @slice_cuts_panel
// CHECK:         scf.forall (%{{.*}}) in (3)
// CHECK-NOT:     scf.forall (
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0] [1, 4, 12]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 12] [1, 4, 12]
func.func @slice_cuts_panel(%x: tensor<1x4x8xf32>, %panels: tensor<3x8x8xf32>, %b: tensor<24xf32>) -> (tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8 : index
  %empty = tensor.empty() : tensor<4x24xf32>
  %product = scf.forall (%j) in (3) shared_outs(%acc = %empty) -> (tensor<4x24xf32>) {
    %column = arith.muli %j, %c8 : index
    %panel = tensor.extract_slice %panels[%j, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<3x8x8xf32> to tensor<8x8xf32>
    %tile0 = tensor.empty() : tensor<4x8xf32>
    %tile = linalg.fill ins(%zero : f32) outs(%tile0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
    %part = linalg.matmul ins(%rows, %panel : tensor<4x8xf32>, tensor<8x8xf32>) outs(%tile : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %part into %acc[0, %column] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x24xf32>
    }
  }
  %expanded = tensor.expand_shape %product [[0, 1], [2]] output_shape [1, 4, 24] : tensor<4x24xf32> into tensor<1x4x24xf32>
  %init = tensor.empty() : tensor<1x4x24xf32>
  %wide = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>,
                         affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%expanded, %b : tensor<1x4x24xf32>, tensor<24xf32>) outs(%init : tensor<1x4x24xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x4x24xf32>
  %s0 = tensor.extract_slice %wide[0, 0, 0] [1, 4, 12] [1, 1, 1] : tensor<1x4x24xf32> to tensor<1x4x12xf32>
  %h0 = tensor.expand_shape %s0 [[0], [1], [2, 3]] output_shape [1, 4, 2, 6] : tensor<1x4x12xf32> into tensor<1x4x2x6xf32>
  %e0 = tensor.empty() : tensor<1x2x4x6xf32>
  %t0 = linalg.transpose ins(%h0 : tensor<1x4x2x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) permutation = [0, 2, 1, 3]
  %s1 = tensor.extract_slice %wide[0, 0, 12] [1, 4, 12] [1, 1, 1] : tensor<1x4x24xf32> to tensor<1x4x12xf32>
  %h1 = tensor.expand_shape %s1 [[0], [1], [2, 3]] output_shape [1, 4, 2, 6] : tensor<1x4x12xf32> into tensor<1x4x2x6xf32>
  %e1 = tensor.empty() : tensor<1x2x4x6xf32>
  %t1 = linalg.transpose ins(%h1 : tensor<1x4x2x6xf32>) outs(%e1 : tensor<1x2x4x6xf32>) permutation = [0, 2, 1, 3]
  return %t0, %t1 : tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>
}
