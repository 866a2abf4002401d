// The matmul micro-kernel for AArch64: 8x8 register tiles (two 4-lane NEON vectors
// per row, 16 accumulators, k unrolled by 4), lowered to LLVM IR, compiled by llc-22.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=aarch64 --emit=schedules | FileCheck %s --check-prefix=PLAN
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=aarch64 --emit=llvm | FileCheck %s --check-prefix=IR
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=aarch64 --emit=llvm | llc-22 -O3 -mtriple=aarch64-linux-gnu -mattr=+neon -o - | FileCheck %s --check-prefix=ASM

// PLAN: k{{[0-9]+}} linalg.matmul [64, 48, 32] matmul {'register_tile': (8, 8), 'padded': False, 'packed_b': (32, 8), 'k_unroll': 4}

// IR: target triple = "aarch64-unknown-linux-gnu"
// IR: define void @main(
// IR: call <8 x float> @llvm.fmuladd.v8f32(
// IR: define void @_mlir_ciface_main(
// IR: attributes #{{[0-9]+}} = { "target-cpu"="generic" "target-features"="+neon" }

// The hot loop: one broadcast A element times two B vectors per row.
// ASM-LABEL: main:
// ASM-COUNT-16: fmla v{{[0-9]+}}.4s, v{{[0-9]+}}.4s, v{{[0-9]+}}.{{4s|s\[0\]}}
// ASM: ret

func.func @main(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x48xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%init : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}
