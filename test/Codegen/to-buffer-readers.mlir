// dnnf-codegen-bufferize on to_buffer ops that CSE merged: the schedule materializes a
// padded matmul operand with structured.bufferize_to_allocation (to_buffer of the
// source, then a linalg.copy), and CSE merges the to_buffer ops of two copies of one
// tensor. Each copy gets a to_buffer of its own again (codegen/cpu/buffer_reads.py), so
// one-shot bufferization sees %p read by the last copy and gives %q, written into the
// same tensor.empty in between, a buffer of its own instead of overwriting %p's.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-bufferize=cpu=x86-64-v3 | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4x5xf32>, %[[Y:[^:]*]]: memref<4x5xf32>
// CHECK:         %[[Q:.*]] = memref.alloc() {{.*}} : memref<4x5xf32>
// CHECK:         %[[P:.*]] = memref.alloc() {{.*}} : memref<4x5xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<4x5xf32>) outs(%[[P]] : memref<4x5xf32>)
// CHECK:         linalg.copy ins(%[[P]] : memref<4x5xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : memref<4x5xf32>) outs(%[[Q]] : memref<4x5xf32>)
// CHECK:         linalg.copy ins(%[[Q]] : memref<4x5xf32>)
// CHECK:         linalg.copy ins(%[[P]] : memref<4x5xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func private @kernel_0(%x: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x5xf32>
  %pb = bufferization.to_buffer %p read_only : tensor<4x5xf32> to memref<4x5xf32, strided<[?, ?], offset: ?>>
  %a1 = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%a1 : memref<4x8xf32>)
  %s1 = memref.subview %a1[0, 0] [4, 5] [1, 1] : memref<4x8xf32> to memref<4x5xf32, strided<[8, 1]>>
  linalg.copy ins(%pb : memref<4x5xf32, strided<[?, ?], offset: ?>>) outs(%s1 : memref<4x5xf32, strided<[8, 1]>>)
  %t1 = bufferization.to_tensor %a1 restrict writable : memref<4x8xf32> to tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%y : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = math.absf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x5xf32>
  %qb = bufferization.to_buffer %q read_only : tensor<4x5xf32> to memref<4x5xf32, strided<[?, ?], offset: ?>>
  %a2 = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%a2 : memref<4x8xf32>)
  %s2 = memref.subview %a2[0, 0] [4, 5] [1, 1] : memref<4x8xf32> to memref<4x5xf32, strided<[8, 1]>>
  linalg.copy ins(%qb : memref<4x5xf32, strided<[?, ?], offset: ?>>) outs(%s2 : memref<4x5xf32, strided<[8, 1]>>)
  %t2 = bufferization.to_tensor %a2 restrict writable : memref<4x8xf32> to tensor<4x8xf32>
  %a3 = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%a3 : memref<4x8xf32>)
  %s3 = memref.subview %a3[0, 0] [4, 5] [1, 1] : memref<4x8xf32> to memref<4x5xf32, strided<[8, 1]>>
  linalg.copy ins(%pb : memref<4x5xf32, strided<[?, ?], offset: ?>>) outs(%s3 : memref<4x5xf32, strided<[8, 1]>>)
  %t3 = bufferization.to_tensor %a3 restrict writable : memref<4x8xf32> to tensor<4x8xf32>
  return %t1, %t2, %t3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A to_buffer read inside a loop (a copy per iteration) gets its copy there; the
// buffer of %p, read by every iteration, is not overwritten by %q.
// CHECK-LABEL: func.func private @kernel_1(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4x5xf32>, %[[Y:[^:]*]]: memref<4x5xf32>, %[[QOUT:[^:]*]]: memref<4x5xf32>
// CHECK:         %[[P:.*]] = memref.alloc() {{.*}} : memref<4x5xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<4x5xf32>) outs(%[[P]] : memref<4x5xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : memref<4x5xf32>) outs(%[[QOUT]] : memref<4x5xf32>)
// CHECK:         scf.for
// CHECK:           linalg.copy ins(%[[P]] : memref<4x5xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func private @kernel_1(%x: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x8xf32>) attributes {dnnf.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4x5xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x5xf32>
  %pb = bufferization.to_buffer %p read_only : tensor<4x5xf32> to memref<4x5xf32, strided<[?, ?], offset: ?>>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%y : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = math.absf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x5xf32>
  %a = memref.alloc() : memref<4x8xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %s = memref.subview %a[0, 0] [4, 5] [1, 1] : memref<4x8xf32> to memref<4x5xf32, strided<[8, 1]>>
    linalg.copy ins(%pb : memref<4x5xf32, strided<[?, ?], offset: ?>>) outs(%s : memref<4x5xf32, strided<[8, 1]>>)
  }
  %t = bufferization.to_tensor %a restrict writable : memref<4x8xf32> to tensor<4x8xf32>
  return %q, %t : tensor<4x5xf32>, tensor<4x8xf32>
}
