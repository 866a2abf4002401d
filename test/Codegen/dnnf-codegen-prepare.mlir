// dnnf-codegen-prepare, code generation step 1 on its own (CPU): the public function
// gets MLIR's C interface and its signature recorded on the module, a kernel function
// becomes an internal noinline function, and its element-wise generics merge into one.
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// CHECK: module attributes {dnnf.codegen.signatures = {main = "f32[4,8];f32[4,8]->f32[4,8]"}}
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: attributes {dnnf.kernel, llvm.linkage = #llvm.linkage<internal>, llvm.no_inline}
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @main(
// CHECK-SAME: attributes {llvm.emit_c_interface}
#id = affine_map<(i, j) -> (i, j)>
func.func private @kernel_0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = call @kernel_0(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
