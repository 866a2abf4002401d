// dnnf-lower: every step of a registered target's backend, in order. For a CPU target
// it is dnnf-lower-to-llvm, and the five step passes, each in a dnnf-opt of its own
// (what a step needs of the earlier ones is on the IR), make the same module, byte for
// byte.
// RUN: dnnf-opt %s --split-input-file --dnnf-lower=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-lower=target=aarch64 | FileCheck %s --check-prefix=ARM
// RUN: dnnf-opt %s --dnnf-lower=cpu=x86-64-v3,threads=2 -o %t.lower.mlir
// RUN: dnnf-opt %s --dnnf-lower-to-llvm=cpu=x86-64-v3,threads=2 -o %t.to-llvm.mlir
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3,threads=2 | dnnf-opt --dnnf-codegen-schedule=cpu=x86-64-v3,threads=2 \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=cpu=x86-64-v3,threads=2 \
// RUN:   | dnnf-opt --dnnf-codegen-map-to-hardware=cpu=x86-64-v3,threads=2 \
// RUN:   | dnnf-opt --dnnf-codegen-emit=cpu=x86-64-v3,threads=2 -o %t.steps.mlir
// (lit's builtin diff drops PYTHONPATH from the commands after it: it comes last.)
// RUN: diff %t.to-llvm.mlir %t.lower.mlir
// RUN: diff %t.steps.mlir %t.lower.mlir

// CHECK: module attributes {dnnf.codegen.cpu = "x86-64-v3", dnnf.codegen.kernels = 1 : i64,
// CHECK-SAME: dnnf.codegen.target = "host"
// CHECK-LABEL: llvm.func @add_relu(
// CHECK-SAME: target_cpu = "x86-64-v3"
// CHECK: llvm.intr.maximum{{.*}}vector<8xf32>
// CHECK-LABEL: llvm.func @_mlir_ciface_add_relu(

// ARM: module attributes {dnnf.codegen.cpu = "generic", dnnf.codegen.kernels = 1 : i64,
// ARM-SAME: dnnf.codegen.target = "aarch64"
// ARM-SAME: llvm.target_triple = "aarch64-unknown-linux-gnu"
// ARM-LABEL: llvm.func @add_relu(
// ARM-SAME: target_cpu = "generic", target_features = #llvm.target_features<["+neon"]>
// ARM: llvm.intr.maximum
#id = affine_map<(i, j) -> (i, j)>
func.func @add_relu(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
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

// -----

// A matmul accumulates with FMAs two vector registers wide (8 lanes of AVX2, 4 of NEON).
// CHECK: module attributes {dnnf.codegen.cpu = "x86-64-v3", dnnf.codegen.kernels = 1 : i64,
// CHECK-LABEL: llvm.func @matmul(
// CHECK: llvm.intr.fmuladd{{.*}}vector<16xf32>
// CHECK-LABEL: llvm.func @_mlir_ciface_matmul(

// ARM: module attributes {dnnf.codegen.cpu = "generic", dnnf.codegen.kernels = 1 : i64,
// ARM-LABEL: llvm.func @matmul(
// ARM: llvm.intr.fmuladd{{.*}}vector<8xf32>
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
