// A product written transposed (K's heads, [S, D] -> [D, S], through a bias) on the Vulkan
// target's lavapipe profile, through its steps 1-4: the thread takes the profile's tall
// matmul tile with the product's rows along S, the dim the transposed store makes
// contiguous (tilings._register_tile): 16 rows of S by two vec4s of D, K stepped by 4,
// then each of its 8 columns stored as 4 vec4s of S. The generic profile keeps 4x4.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-prepare{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-schedule{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-bufferize{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-map-to-hardware{target=vulkan device=lavapipe})" | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-prepare{target=vulkan})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-schedule{target=vulkan})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-bufferize{target=vulkan})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-map-to-hardware{target=vulkan})" \
// RUN:   | FileCheck %s --check-prefix=GENERIC

// MobileBERT's K^T: [1, 128, 128] @ [128, 4, 32] + b stored as [1, 4, 32 (D), 128 (S)]. A
// workgroup of 8x2 threads covers 128 of S by 16 of D: a grid of 2 x 4 heads (4x4 threads
// took 4 x 4 x 4). The register tile is 16 x 8 (a private array of it for the transposed
// store): 32 vec4 accumulators, 128 FMAs a step of K.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>, known_grid_size = array<i32: 2, 4, 1>
// CHECK: memref.alloca() : memref<1x16x1x8xf32, #spirv.storage_class<Function>>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128 step %c4 iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-COUNT-128: vector.fma
// CHECK-NEXT: scf.yield
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-COUNT-32: vector.store %{{.*}}, %arg3[{{.*}}] : memref<1x4x32x128xf32>, vector<4xf32>
// CHECK: gpu.return
// GENERIC-LABEL: gpu.func @kernel_0_kernel(
// GENERIC-SAME: known_block_size = array<i32: 16, 1, 1>, known_grid_size = array<i32: 4, 4, 4>
// GENERIC: memref.alloca() : memref<1x4x1x4xf32, #spirv.storage_class<Function>>
// GENERIC-COUNT-16: vector.fma
// GENERIC-NEXT: scf.yield
// GENERIC-COUNT-4: vector.store %{{.*}}, %arg3[{{.*}}] : memref<1x4x32x128xf32>, vector<4xf32>
// GENERIC: gpu.return


func.func private @kernel_0(%x: tensor<1x128x128xf32>, %w: tensor<128x4x32xf32>, %b: tensor<4x32xf32>) -> tensor<1x4x32x128xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128x4x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x128x4x32xf32>) -> tensor<1x128x4x32xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, s, h, d, k) -> (b, s, k)>, affine_map<(b, s, h, d, k) -> (k, h, d)>, affine_map<(b, s, h, d, k) -> (b, s, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x128x128xf32>, tensor<128x4x32xf32>) outs(%f : tensor<1x128x4x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x128x4x32xf32>
  %e2 = tensor.empty() : tensor<1x4x32x128xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(b, h, d, s) -> (b, s, h, d)>, affine_map<(b, h, d, s) -> (h, d)>, affine_map<(b, h, d, s) -> (b, h, d, s)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%p, %b : tensor<1x128x4x32xf32>, tensor<4x32xf32>) outs(%e2 : tensor<1x4x32x128xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %v = arith.addf %in, %bias : f32
    linalg.yield %v : f32
  } -> tensor<1x4x32x128xf32>
  return %t : tensor<1x4x32x128xf32>
}
func.func @main(%x: tensor<1x128x128xf32>, %w: tensor<128x4x32xf32>, %b: tensor<4x32xf32>) -> tensor<1x4x32x128xf32> {
  %r = call @kernel_0(%x, %w, %b) : (tensor<1x128x128xf32>, tensor<128x4x32xf32>, tensor<4x32xf32>) -> tensor<1x4x32x128xf32>
  return %r : tensor<1x4x32x128xf32>
}


