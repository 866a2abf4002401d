// dnnf-codegen-bufferize, code generation step 3, after steps 1 and 2 in other processes:
// tensors become buffers, the result an out-parameter that the kernel writes in place
// (also through the call of a kernel function), and no tensor is left.
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | dnnf-opt --dnnf-codegen-schedule=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=cpu=x86-64-v3 | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK-NOT: tensor<
// CHECK: vector.transfer_write
// CHECK-NOT: memref.alloc
// CHECK: return
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>, %[[R:.*]]: memref<4x8xf32>)
// CHECK-NEXT: call @kernel_0(%[[X]], %[[Y]], %[[R]])
// CHECK-NOT: tensor<
#id = affine_map<(i, j) -> (i, j)>
func.func private @kernel_0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = call @kernel_0(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
