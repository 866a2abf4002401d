// The GPU matmul's reduction step (codegen/gpu/contraction_steps.py), through the
// Vulkan target's steps 1-4 (OpenCL prints the same mapped kernels): K stepped by 4 where
// it is a multiple of 4 and A is contiguous along it, a vec4 of A per row and step;
// otherwise, and for a thread of one output column, steps of 1; fp16 storage widens
// each vec4 it loads on its own (SPIR-V has no 2-d vectors).
// For the lavapipe profile (threads of up to 16 rows, GpuDevice.matmul_rows); the generic
// profile's 4 x 4 threads: matmul-steps.mlir.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-prepare{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-schedule{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-bufferize{target=vulkan device=lavapipe})" \
// RUN:   | dnnf-opt --split-input-file --pass-pipeline="builtin.module(dnnf-codegen-map-to-hardware{target=vulkan device=lavapipe})" | FileCheck %s

// An attention's Q K^T (B given as [batch, N, K]): the device profile's matmul workgroup
// (8x2 threads of 16 rows by two vec4s of columns, GpuDevice.matmul_rows and
// tilings._wide_columns: 32 rows by 64 columns), the grid down the rows first (x: 64 /
// 32 rows, y: batch); 32 vec4 accumulators in registers; per step a vec4 of each of
// Q's 16 rows and one vec4 along K of each of eight rows of K (each read once),
// transposed in registers, four FMAs per row and vec4 of columns.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>, known_grid_size = array<i32: 2, 4, 1>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[C32]] step %[[C4]] iter_args({{.*}}) -> ({{(vector<4xf32>, ){31}vector<4xf32>}}) {
// CHECK-COUNT-24: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[K]]] : memref<4x64x32xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: scf.yield
func.func private @kernel_0(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>) -> tensor<4x64x64xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%q, %k : tensor<4x64x32xf32>, tensor<4x64x32xf32>) outs(%f : tensor<4x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %o, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x64x64xf32>
  return %s : tensor<4x64x64xf32>
}
func.func @main(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>) -> tensor<4x64x64xf32> {
  %r = call @kernel_0(%q, %k) : (tensor<4x64x32xf32>, tensor<4x64x32xf32>) -> tensor<4x64x64xf32>
  return %r : tensor<4x64x64xf32>
}

// -----

// K = 61 (odd), N = 45: steps of 1, a scalar of A broadcast into an FMA with three
// elements of B (45 = 5 threads x 3, the 3 batches on threads too), the 37 rows on the
// grid's x; nothing read past either operand.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 15, 1, 1>, known_grid_size = array<i32: 37, 3, 1>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C61:.*]] = arith.constant 61 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C61]] step %[[C1]] iter_args(%{{.*}}) -> (vector<3xf32>) {
// CHECK: vector.load %{{.*}} : memref<3x37x61xf32>, vector<f32>
// CHECK: vector.load %{{.*}} : memref<3x61x45xf32>, vector<3xf32>
// CHECK: math.fma %{{.*}} : vector<3xf32>
// CHECK-NEXT: scf.yield
func.func private @kernel_0(%a: tensor<3x37x61xf32>, %b: tensor<3x61x45xf32>) -> tensor<3x37x45xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x37x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x37x45xf32>) -> tensor<3x37x45xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<3x37x61xf32>, tensor<3x61x45xf32>) outs(%f : tensor<3x37x45xf32>) -> tensor<3x37x45xf32>
  return %m : tensor<3x37x45xf32>
}
func.func @main(%a: tensor<3x37x61xf32>, %b: tensor<3x61x45xf32>) -> tensor<3x37x45xf32> {
  %r = call @kernel_0(%a, %b) : (tensor<3x37x61xf32>, tensor<3x61x45xf32>) -> tensor<3x37x45xf32>
  return %r : tensor<3x37x45xf32>
}

// -----

// fp16 storage (dnnf-gpu-fp16-storage widens in the body): f16 vec4 loads, each row of
// B^T and each element of A widened to f32, f32 accumulators (5 rows a thread: 2880
// outputs keep 8 workgroups of 16 threads with 5 rows of 4, tilings._matmul_rows).
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> ({{(vector<4xf32>, ){4}vector<4xf32>}}) {
// CHECK: vector.load %{{.*}} : memref<2x40x32xf16>, vector<4xf16>
// CHECK-COUNT-4: vector.load %{{.*}} : memref<2x36x32xf16>, vector<4xf16>
// CHECK: %[[ROW:.*]] = vector.from_elements %{{.*}} : vector<4xf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[ROW]] : vector<4xf16> to vector<4xf32>
// CHECK: vector.fma %[[WIDE]], %{{.*}} : vector<4xf32>
// CHECK-NOT: vector<4x4x
// CHECK: scf.yield
func.func private @kernel_0(%q: tensor<2x40x32xf16>, %k: tensor<2x36x32xf16>) -> tensor<2x40x36xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40x36xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x40x36xf32>) -> tensor<2x40x36xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%q, %k : tensor<2x40x32xf16>, tensor<2x36x32xf16>) outs(%f : tensor<2x40x36xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %a1 = arith.extf %a : f16 to f32
    %b1 = arith.extf %b : f16 to f32
    %p = arith.mulf %a1, %b1 : f32
    %t = arith.addf %o, %p : f32
    linalg.yield %t : f32
  } -> tensor<2x40x36xf32>
  return %s : tensor<2x40x36xf32>
}
func.func @main(%q: tensor<2x40x32xf16>, %k: tensor<2x36x32xf16>) -> tensor<2x40x36xf32> {
  %r = call @kernel_0(%q, %k) : (tensor<2x40x32xf16>, tensor<2x36x32xf16>) -> tensor<2x40x36xf32>
  return %r : tensor<2x40x36xf32>
}
