// dnnf-codegen-bufferize on a recurrence's loop over its time steps (an scf.for marked
// dnnf.time_steps): an op in it that writes into a tensor.empty from outside the loop (CSE
// merges identical ones: here the one R^T was computed into) gets its own buffer, made
// in the loop, so no step can overwrite what the next one reads (R^T).
// RUN: dnnf-opt %s --dnnf-codegen-bufferize=cpu=x86-64-v3 | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK: %[[RT:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK: linalg.transpose ins(%arg0 : memref<4x4xf32>) outs(%[[RT]] : memref<4x4xf32>)
// CHECK: scf.for
// CHECK-NEXT: %[[STEP:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}}, %[[RT]] : memref<4x4xf32>, memref<4x4xf32>) outs(%[[STEP]] : memref<4x4xf32>)
// CHECK: scf.yield %[[STEP]]
// CHECK-NEXT: } {dnnf.time_steps}
#id = affine_map<(i, j) -> (i, j)>
func.func private @kernel_0(%r: tensor<4x4xf32>, %h0: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {dnnf.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %rt = linalg.transpose ins(%r : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %out = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %h0) -> (tensor<4x4xf32>) {
    %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%h, %rt : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.mulf %a, %b : f32
      linalg.yield %t : f32
    } -> tensor<4x4xf32>
    scf.yield %p : tensor<4x4xf32>
  } {dnnf.time_steps}
  return %out : tensor<4x4xf32>
}
