// The transform-dialect schedule of a matmul for a pinned AVX-512 CPU (x86-64-v4), two threads:
// scf.forall over the threads with the accumulator fill fused, a packed (nofold pad,
// hoisted out of the row loop) K x 32 panel of B, 8x32 register tiles whose
// accumulator is a loop-carried vector, one vector.contract per k step.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=2 --emit=mlir --stop-after=schedule | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=2 --emit=mlir --stop-after=parallel | FileCheck %s --check-prefix=OMP
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=2 --emit=mlir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @main
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs
// CHECK: tensor.pad %{{.*}} nofold
// CHECK: scf.for %{{.*}} step %c8
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %cst) -> (vector<8x32xf32>)
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: scf.forall.in_parallel

// The thread count is left to the OpenMP runtime (no num_threads clause).
// OMP: omp.parallel {
// OMP: omp.wsloop
// OMP: vector.fma %{{.*}} : vector<32xf32>

// LLVM: llvm.func @main(
// LLVM: llvm.intr.fmuladd
// LLVM: llvm.func @_mlir_ciface_main(

func.func @main(%a: tensor<128x256xf32>, %b: tensor<256x512xf32>) -> tensor<128x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x512xf32>) -> tensor<128x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x512xf32>) outs(%init : tensor<128x512xf32>) -> tensor<128x512xf32>
  return %r : tensor<128x512xf32>
}
