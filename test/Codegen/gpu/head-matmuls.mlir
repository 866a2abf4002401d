// Attention's matmuls through the Vulkan target's steps 1-4 (OpenCL prints the same
// mapped kernels): a matmul that is its kernel's root writes its thread's rows in place
// (codegen/gpu/overwrites.py: no private tile copied out), a projection copied out as
// heads computes the heads' layout itself (permuted_products.py), and one written
// transposed (K's heads, [S, D] -> [D, S]) gets the matmul workgroup and K step, its
// tile stored transposed from a private array.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// A batch matmul with no epilogue: 8x2 threads of 4x4, K stepped by 4, each row stored
// once to the result after the loop (the fill's zeros stored before it), no private array.
// CHECK-LABEL: gpu.func @kernel_0_kernel(%arg0: memref<2x8x32xf32>
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>
// CHECK-NOT: memref.alloca
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.yield
// CHECK-COUNT-4: vector.store %{{.*}}#{{[0-3]}}, %arg0[{{.*}}] : memref<2x8x32xf32>, vector<4xf32>
// CHECK-NOT: memref.alloca
// CHECK: gpu.return
func.func private @kernel_0(%a: tensor<2x8x64xf32>, %b: tensor<2x64x32xf32>) -> tensor<2x8x32xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %p = linalg.batch_matmul ins(%a, %b : tensor<2x8x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %p : tensor<2x8x32xf32>
}
func.func @main(%a: tensor<2x8x64xf32>, %b: tensor<2x64x32xf32>) -> tensor<2x8x32xf32> {
  %r = call @kernel_0(%a, %b) : (tensor<2x8x64xf32>, tensor<2x64x32xf32>) -> tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}


// -----

// A projection [1, 16, 4, 16] copied out as heads [1, 4, 16, 16]: the copy folds into the
// product's output map; the rows are stored straight into the heads' layout.
// CHECK-LABEL: gpu.func @kernel_0_kernel(%arg0: memref<1x4x16x16xf32>
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>
// CHECK-NOT: memref.alloca
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.yield
// CHECK-COUNT-4: vector.store %{{.*}}#{{[0-3]}}, %arg0[{{.*}}] : memref<1x4x16x16xf32>, vector<4xf32>
// CHECK-NOT: memref.alloca
// CHECK: gpu.return

func.func private @kernel_0(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, s, h, d, k) -> (b, s, k)>, affine_map<(b, s, h, d, k) -> (k, h, d)>, affine_map<(b, s, h, d, k) -> (b, s, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x16x64xf32>, tensor<64x4x16xf32>) outs(%f : tensor<1x16x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x4x16xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %t = linalg.transpose ins(%p : tensor<1x16x4x16xf32>) outs(%e2 : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x4x16x16xf32>
}
func.func @main(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32> {
  %r = call @kernel_0(%x, %w) : (tensor<1x16x64xf32>, tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32>
  return %r : tensor<1x4x16x16xf32>
}


// -----

// The same projection stored transposed ([1, 4, 16 (D), 16 (S)], K's heads): the product's
// workgroup and K step, its 4x4 tile then stored column by column.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-COUNT-4: vector.load %{{.*}} : memref<64x4x16xf32>, vector<4xf32>
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %arg2[{{.*}}] : memref<1x4x16x16xf32>

func.func private @kernel_0(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, s, h, d, k) -> (b, s, k)>, affine_map<(b, s, h, d, k) -> (k, h, d)>, affine_map<(b, s, h, d, k) -> (b, s, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x16x64xf32>, tensor<64x4x16xf32>) outs(%f : tensor<1x16x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x4x16xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %t = linalg.transpose ins(%p : tensor<1x16x4x16xf32>) outs(%e2 : tensor<1x4x16x16xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x4x16x16xf32>
}
func.func @main(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32> {
  %r = call @kernel_0(%x, %w) : (tensor<1x16x64xf32>, tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32>
  return %r : tensor<1x4x16x16xf32>
}


// -----

// K's heads stored transposed through a bias ([1, 4, 16 (D), 16 (S)] = x w + b): the
// matmul workgroup and K step like the plain copy above (the element-wise tiling gave
// such a root 128 threads of one column each); each column of the thread's tile (a
// vec4 of rows, read down the private array) gets its bias and is stored as a vec4 of S.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-COUNT-4: vector.load %{{.*}} : memref<64x4x16xf32>, vector<4xf32>
// CHECK: scf.yield
// CHECK: vector.load %arg2[{{.*}}] : memref<4x16xf32>, vector<f32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-COUNT-4: vector.store %{{.*}}, %arg3[{{.*}}] : memref<1x4x16x16xf32>, vector<4xf32>

func.func private @kernel_0(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>, %b: tensor<4x16xf32>) -> tensor<1x4x16x16xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, s, h, d, k) -> (b, s, k)>, affine_map<(b, s, h, d, k) -> (k, h, d)>, affine_map<(b, s, h, d, k) -> (b, s, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x16x64xf32>, tensor<64x4x16xf32>) outs(%f : tensor<1x16x4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x4x16xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(b, h, d, s) -> (b, s, h, d)>, affine_map<(b, h, d, s) -> (h, d)>, affine_map<(b, h, d, s) -> (b, h, d, s)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%p, %b : tensor<1x16x4x16xf32>, tensor<4x16xf32>) outs(%e2 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %v = arith.addf %in, %bias : f32
    linalg.yield %v : f32
  } -> tensor<1x4x16x16xf32>
  return %t : tensor<1x4x16x16xf32>
}
func.func @main(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>, %b: tensor<4x16xf32>) -> tensor<1x4x16x16xf32> {
  %r = call @kernel_0(%x, %w, %b) : (tensor<1x16x64xf32>, tensor<64x4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x16x16xf32>
  return %r : tensor<1x4x16x16xf32>
}


// -----

// The same in fp16 storage (codegen/gpu/precision.py): the operands widened, the product
// narrowed after its transpose. The narrowing converts each element by itself, so the
// product keeps the matmul workgroup and K step (epilogue_dims.product_dims); with
// the element-wise tiling, 128 threads of one column each, ALBERT's QKV kernel took 6.4
// times as long on an NVIDIA H200.
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-SAME: known_block_size = array<i32: 16, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: scf.yield
// CHECK: %[[N:.*]] = arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store %[[N]], %arg2[{{.*}}] : memref<1x4x16x16xf16>, vector<4xf16>

#id3 = affine_map<(a, b, c) -> (a, b, c)>
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func private @kernel_0(%x16: tensor<1x16x64xf16>, %w16: tensor<64x4x16xf16>) -> tensor<1x4x16x16xf16> attributes {dnnf.kernel} {
  %xe = tensor.empty() : tensor<1x16x64xf32>
  %x = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x16 : tensor<1x16x64xf16>) outs(%xe : tensor<1x16x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %v = arith.extf %in : f16 to f32
    linalg.yield %v : f32
  } -> tensor<1x16x64xf32>
  %we = tensor.empty() : tensor<64x4x16xf32>
  %w = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%w16 : tensor<64x4x16xf16>) outs(%we : tensor<64x4x16xf32>) {
  ^bb0(%in: f16, %out: f32):
    %v = arith.extf %in : f16 to f32
    linalg.yield %v : f32
  } -> tensor<64x4x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, s, h, d, k) -> (b, s, k)>, affine_map<(b, s, h, d, k) -> (k, h, d)>, affine_map<(b, s, h, d, k) -> (b, s, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x16x64xf32>, tensor<64x4x16xf32>) outs(%f : tensor<1x16x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x4x16xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %t = linalg.transpose ins(%p : tensor<1x16x4x16xf32>) outs(%e2 : tensor<1x4x16x16xf32>) permutation = [0, 2, 3, 1]
  %e3 = tensor.empty() : tensor<1x4x16x16xf16>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%t : tensor<1x4x16x16xf32>) outs(%e3 : tensor<1x4x16x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %v = arith.truncf %in : f32 to f16
    linalg.yield %v : f16
  } -> tensor<1x4x16x16xf16>
  return %n : tensor<1x4x16x16xf16>
}
func.func @main(%x: tensor<1x16x64xf16>, %w: tensor<64x4x16xf16>) -> tensor<1x4x16x16xf16> {
  %r = call @kernel_0(%x, %w) : (tensor<1x16x64xf16>, tensor<64x4x16xf16>) -> tensor<1x4x16x16xf16>
  return %r : tensor<1x4x16x16xf16>
}
