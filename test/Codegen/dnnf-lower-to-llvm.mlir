// The code generator as a dnnf-opt pass: ECG -> linalg -> LLVM dialect, for a named
// host CPU (its target attributes on every function) and for AArch64 (NEON).
// RUN: dnnf-opt %s --convert-ecg-to-linalg --dnnf-lower-to-llvm=cpu=x86-64-v4 | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(convert-ecg-to-linalg,dnnf-lower-to-llvm{target=host cpu=x86-64-v3})' | FileCheck %s --check-prefixes=CHECK,AVX2
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(convert-ecg-to-linalg,dnnf-lower-to-llvm{target=aarch64})' | FileCheck %s --check-prefix=ARM
// RUN: not dnnf-opt %s --pass-pipeline='builtin.module(convert-ecg-to-linalg,dnnf-lower-to-llvm{target=sparc})' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not dnnf-opt %s --pass-pipeline='builtin.module(convert-ecg-to-linalg,dnnf-lower-to-llvm{cpu=pentium9})' 2>&1 | FileCheck %s --check-prefix=BAD-CPU

// The matmul accumulates with vector FMAs two registers wide (16 lanes of AVX-512,
// 8 of AVX2); GELU's erf is a polynomial, not a libm call.
// CHECK-LABEL: llvm.func @gelu_mlp(
// CHECK-SAME: target_cpu = "x86-64-v{{[34]}}"
// AVX512-SAME: "+avx512f"
// AVX2-NOT: avx512
// CHECK-NOT: erff
// AVX512: llvm.intr.fmuladd{{.*}}vector<32xf32>
// AVX2: llvm.intr.fmuladd{{.*}}vector<16xf32>
// CHECK-NOT: erff
// CHECK-LABEL: llvm.func @_mlir_ciface_gelu_mlp(

// ARM: llvm.target_triple = "aarch64-unknown-linux-gnu"
// ARM: llvm.func @gelu_mlp(
// ARM-SAME: target_cpu = "generic", target_features = #llvm.target_features<["+neon"]>

// BAD: error: dnnf-lower-to-llvm: unknown target 'sparc'
// BAD-CPU: error: dnnf-lower-to-llvm: unknown CPU 'pentium9' for x86_64
func.func @gelu_mlp(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %m = "ecg.mat_mul"(%x, %w) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %g = "ecg.gelu"(%m) {approximate = "none"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %g : tensor<16x32xf32>
}
