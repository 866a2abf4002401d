// Attention kernels on the Vulkan target's lavapipe profile (GpuDevice.attention_tiles),
// through its steps 1-4: the softmax's division deferred past P V
// (codegen/gpu/deferred_divisions.py), the scores staged once in shared memory beside
// their exponentials (kernels.staged_ops), P V register-tiled (tilings.attention_tiling);
// the generic profile's schedule for contrast.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-prepare{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-schedule{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-bufferize{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-map-to-hardware{target=vulkan device=lavapipe})" | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-prepare{target=vulkan})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-schedule{target=vulkan})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-bufferize{target=vulkan})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-map-to-hardware{target=vulkan})" \
// RUN:   | FileCheck %s --check-prefix=GENERIC

// Two heads of 32 rows, head size 16, merged into [32, 32] after. A workgroup takes the 32
// rows of one head (2 x 32 staged floats a row: 16 KiB hold 62 rows), two of them, in 8
// threads: P V's 2 x 4, a thread 16 rows by 4 columns, and the staged loops over no more
// threads than those (none idle while P V runs). Its scores and their exponentials are
// staged in shared memory, each once ([1, 32, 32]); the scores computed once, K (16)
// stepped by 4 (a thread's 32 rows of them, more than are unrolled, accumulated in its
// private array); P V K (32) stepped by 4: 16 vec4 accumulators, 64 FMAs a step; then
// each row divided by its sum and stored.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 8, 1, 1>, known_grid_size = array<i32: 2, 1, 1>
// CHECK-COUNT-2: memref.alloc() : memref<1x32x32xf32, #spirv.storage_class<Workgroup>>
// CHECK-NOT: memref.alloc() : memref<1x32x32xf32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16 step %c4 {
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c32 step %c4 iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-NOT: arith.divf
// CHECK-COUNT-64: vector.fma
// CHECK-NEXT: scf.yield
// CHECK-COUNT-16: arith.divf %{{.*}}#{{[0-9]+}}, %{{.*}} : vector<4xf32>
// CHECK: gpu.return
// The generic profile: the scores computed by each reader, not staged; P V a row of 4
// a thread, K stepped by 1, each probability divided by its row's sum in the loop.
// GENERIC-LABEL: gpu.func @kernel_0_kernel(
// GENERIC-NOT: memref.alloc() : memref<1x32x32xf32
// GENERIC: scf.for %{{.*}} = %{{.*}} to %c32 step %c1 iter_args({{.*}}) -> (vector<4xf32>) {
// GENERIC: arith.divf
// GENERIC: scf.yield
// GENERIC: gpu.return
func.func private @kernel_0(%q: tensor<2x32x16xf32>, %kt: tensor<2x16x32xf32>, %mask: tensor<32xf32>, %v: tensor<2x32x16xf32>) -> tensor<32x32xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %e3 = tensor.empty() : tensor<2x32x32xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %qk = linalg.batch_matmul ins(%q, %kt : tensor<2x32x16xf32>, tensor<2x16x32xf32>) outs(%z3 : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qk, %mask : tensor<2x32x32xf32>, tensor<32xf32>) outs(%e3 : tensor<2x32x32xf32>) {
  ^bb0(%s: f32, %m: f32, %o: f32):
    %a = arith.addf %s, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x32x32xf32>
  %e2 = tensor.empty() : tensor<2x32xf32>
  %low = linalg.fill ins(%lowest : f32) outs(%e2 : tensor<2x32xf32>) -> tensor<2x32xf32>
  %max = linalg.reduce ins(%masked : tensor<2x32x32xf32>) outs(%low : tensor<2x32xf32>) dimensions = [2]
    (%in: f32, %init: f32) {
      %r = arith.maximumf %in, %init : f32
      linalg.yield %r : f32
    }
  %exp = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%masked, %max : tensor<2x32x32xf32>, tensor<2x32xf32>) outs(%e3 : tensor<2x32x32xf32>) {
  ^bb0(%s: f32, %m: f32, %o: f32):
    %d = arith.subf %s, %m : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<2x32x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x32xf32>) -> tensor<2x32xf32>
  %sum = linalg.reduce ins(%exp : tensor<2x32x32xf32>) outs(%z2 : tensor<2x32xf32>) dimensions = [2]
    (%in: f32, %init: f32) {
      %r = arith.addf %in, %init : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<2x32x32xf32>, tensor<2x32xf32>) outs(%e3 : tensor<2x32x32xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %d = arith.divf %x, %s : f32
    linalg.yield %d : f32
  } -> tensor<2x32x32xf32>
  %eo = tensor.empty() : tensor<2x32x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
  %pv = linalg.batch_matmul ins(%p, %v : tensor<2x32x32xf32>, tensor<2x32x16xf32>) outs(%zo : tensor<2x32x16xf32>) -> tensor<2x32x16xf32>
  %et = tensor.empty() : tensor<32x2x16xf32>
  %rows = linalg.transpose ins(%pv : tensor<2x32x16xf32>) outs(%et : tensor<32x2x16xf32>) permutation = [1, 0, 2]
  %merged = tensor.collapse_shape %rows [[0], [1, 2]] : tensor<32x2x16xf32> into tensor<32x32xf32>
  return %merged : tensor<32x32xf32>
}
func.func @main(%q: tensor<2x32x16xf32>, %kt: tensor<2x16x32xf32>, %mask: tensor<32xf32>, %v: tensor<2x32x16xf32>) -> tensor<32x32xf32> {
  %r = call @kernel_0(%q, %kt, %mask, %v) : (tensor<2x32x16xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<2x32x16xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
