// A kernel returning a contraction's result whole and a slice of it (BiLSTM's input
// projection and its forward half, which the forward steps read while the backward
// ones read the other half through a kernel of their own): the slice is computed again
// by a copy of the contraction for its columns, its bias init copied alike, when that
// copy runs at most 2^20 iterations (codegen/gpu/slices.py, RECOMPUTED_WORK). One
// launch; before, the contraction ran in a launch of its own and the slice's copy,
// reading what other workgroups wrote, in a second ("phased").
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// 4 x 2 rows of 8 inputs, 32 outputs, the first 16 returned too: 512 iterations in the copy.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x2x8xf32>, %[[W:[a-z0-9]+]]: memref<8x32xf32>, %[[B:[a-z0-9]+]]: memref<32xf32>, %[[P:[a-z0-9]+]]: memref<4x2x32xf32>, %[[H:[a-z0-9]+]]: memref<4x2x16xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[B]] : memref<32xf32>, %[[P]] : memref<4x2x32xf32>, %[[X]] : memref<4x2x8xf32>, %[[W]] : memref<8x32xf32>, {{.*}}, %[[H]] : memref<4x2x16xf32>, {{.*}}) {dnnf.gpu.writes = [false, true, false, false, false, true, false]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#x = affine_map<(s, b, n, k) -> (s, b, k)>
#w = affine_map<(s, b, n, k) -> (k, n)>
#o = affine_map<(s, b, n, k) -> (s, b, n)>
#bias = affine_map<(s, b, n) -> (n)>
#id3 = affine_map<(s, b, n) -> (s, b, n)>
func.func private @kernel_0(%x: tensor<4x2x8xf32>, %w: tensor<8x32xf32>, %bias: tensor<32xf32>) -> (tensor<4x2x32xf32>, tensor<4x2x16xf32>) attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<4x2x32xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%bias : tensor<32xf32>) outs(%e : tensor<4x2x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x2x32xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<4x2x8xf32>, tensor<8x32xf32>) outs(%init : tensor<4x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x32xf32>
  %half = tensor.extract_slice %p[0, 0, 0] [4, 2, 16] [1, 1, 1] : tensor<4x2x32xf32> to tensor<4x2x16xf32>
  return %p, %half : tensor<4x2x32xf32>, tensor<4x2x16xf32>
}

func.func @main(%x: tensor<4x2x8xf32>, %w: tensor<8x32xf32>, %bias: tensor<32xf32>) -> (tensor<4x2x32xf32>, tensor<4x2x16xf32>) {
  %r:2 = call @kernel_0(%x, %w, %bias) : (tensor<4x2x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> (tensor<4x2x32xf32>, tensor<4x2x16xf32>)
  return %r#0, %r#1 : tensor<4x2x32xf32>, tensor<4x2x16xf32>
}

// -----

// Where the copy would run 2^23 iterations (64 x 8 rows of 128 inputs, 128 of 256
// outputs), computing it again costs more than a launch: the contraction first, the
// slice's copy in a second launch.
// CHECK-LABEL: func.func private @kernel_1(
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: gpu.launch_func
// CHECK-SAME: {dnnf.gpu.writes = [false, true, false, false]}
// CHECK: gpu.launch_func
// CHECK-SAME: {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#x = affine_map<(s, b, n, k) -> (s, b, k)>
#w = affine_map<(s, b, n, k) -> (k, n)>
#o = affine_map<(s, b, n, k) -> (s, b, n)>
#bias = affine_map<(s, b, n) -> (n)>
#id3 = affine_map<(s, b, n) -> (s, b, n)>
func.func private @kernel_1(%x: tensor<64x8x128xf32>, %w: tensor<128x256xf32>, %bias: tensor<256xf32>) -> (tensor<64x8x256xf32>, tensor<64x8x128xf32>) attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<64x8x256xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%bias : tensor<256xf32>) outs(%e : tensor<64x8x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<64x8x256xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<64x8x128xf32>, tensor<128x256xf32>) outs(%init : tensor<64x8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x8x256xf32>
  %half = tensor.extract_slice %p[0, 0, 0] [64, 8, 128] [1, 1, 1] : tensor<64x8x256xf32> to tensor<64x8x128xf32>
  return %p, %half : tensor<64x8x256xf32>, tensor<64x8x128xf32>
}

func.func @main(%x: tensor<64x8x128xf32>, %w: tensor<128x256xf32>, %bias: tensor<256xf32>) -> (tensor<64x8x256xf32>, tensor<64x8x128xf32>) {
  %r:2 = call @kernel_1(%x, %w, %bias) : (tensor<64x8x128xf32>, tensor<128x256xf32>, tensor<256xf32>) -> (tensor<64x8x256xf32>, tensor<64x8x128xf32>)
  return %r#0, %r#1 : tensor<64x8x256xf32>, tensor<64x8x128xf32>
}
