// dnnf-codegen-schedule, code generation step 2, after step 1 in another process (what
// it needs is on the IR): the kernel plan applied as a transform script, and the
// kernels recorded on the module: the kernel function's calls (two launches of one
// kernel), or without kernel functions the ops the plan scheduled.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 | FileCheck %s

// An element-wise kernel: rows of one AVX2 vector.
// CHECK: module attributes {dnnf.codegen.kernels = 2 : i64,
// CHECK-SAME: dnnf.codegen.unique_kernels = 1 : i64}
// CHECK-LABEL: func.func private @kernel_0(
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<1x8xf32>
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @main(
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
  %s = call @kernel_0(%r, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// A matmul: register tiles accumulated with vector.contract, the fill fused.
// CHECK: module attributes {dnnf.codegen.kernels = 1 : i64,
// CHECK-SAME: dnnf.codegen.unique_kernels = 1 : i64}
// CHECK-LABEL: func.func @matmul(
// CHECK: vector.contract
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
