// The code generator as a dnnf-opt pass: ECG -> linalg -> LLVM dialect, for the host
// and for AArch64 (NEON target attributes on every function).
// RUN: dnnf-opt %s --convert-ecg-to-linalg --dnnf-lower-to-llvm | FileCheck %s
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(convert-ecg-to-linalg,dnnf-lower-to-llvm{target=aarch64})' | FileCheck %s --check-prefix=ARM
// RUN: not dnnf-opt %s --pass-pipeline='builtin.module(convert-ecg-to-linalg,dnnf-lower-to-llvm{target=sparc})' 2>&1 | FileCheck %s --check-prefix=BAD

// The matmul accumulates with vector FMAs; GELU's erf is a polynomial, not a libm call.
// CHECK-LABEL: llvm.func @gelu_mlp(
// CHECK-NOT: erff
// CHECK: llvm.intr.fmuladd{{.*}}vector<32xf32>
// CHECK-NOT: erff
// CHECK-LABEL: llvm.func @_mlir_ciface_gelu_mlp(

// ARM: llvm.target_triple = "aarch64-unknown-linux-gnu"
// ARM: llvm.func @gelu_mlp(
// ARM-SAME: target_cpu = "generic", target_features = #llvm.target_features<["+neon"]>

// BAD: error: dnnf-lower-to-llvm: unknown target 'sparc'
func.func @gelu_mlp(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %m = "ecg.mat_mul"(%x, %w) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %g = "ecg.gelu"(%m) {approximate = "none"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %g : tensor<16x32xf32>
}
