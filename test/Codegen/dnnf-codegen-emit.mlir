// dnnf-codegen-emit, code generation step 5, after steps 1-4 in other processes (CPU):
// the LLVM dialect, the module naming its target and CPU (the target's options) and
// LLVM's triple, every function the CPU and features of a pinned CPU, the kernel
// function internal and noinline.
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | dnnf-opt --dnnf-codegen-schedule=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=cpu=x86-64-v3 | dnnf-opt --dnnf-codegen-map-to-hardware=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --dnnf-codegen-emit=cpu=x86-64-v3 | FileCheck %s

// CHECK: module attributes {dnnf.codegen.cpu = "x86-64-v3", dnnf.codegen.kernels = 1 : i64,
// CHECK-SAME: dnnf.codegen.target = "host", dnnf.codegen.unique_kernels = 1 : i64,
// CHECK-SAME: llvm.target_triple = "x86_64-unknown-linux-gnu"
// CHECK-LABEL: llvm.func internal @kernel_0(
// CHECK-SAME: no_inline
// CHECK-SAME: target_cpu = "x86-64-v3"
// CHECK: llvm.fadd %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-LABEL: llvm.func @main(
// CHECK-LABEL: llvm.func @_mlir_ciface_main(
// CHECK-NOT: func.func
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
