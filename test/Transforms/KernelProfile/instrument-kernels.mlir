// RUN: dnnf-opt %s --dnnf-instrument-kernels | FileCheck %s

// Every kernel call of the entry, and only those (malloc is not a kernel), is wrapped
// in the glue's timers with its launch number in program order; a kernel called twice
// is two launches. The module records each launch's kernel and statistics.
// CHECK: module attributes {dnnf.profile.launches = [{bytes = 48 : i64, flops = 4 : i64, kernel = "kernel_0_relu", ops = "relu", shapes = "4xf32 -> 4xf32"}, {kernel = "kernel_1_neg"}, {bytes = 48 : i64, flops = 4 : i64, kernel = "kernel_0_relu", ops = "relu", shapes = "4xf32 -> 4xf32"}]}
// CHECK: llvm.func @dnnf_kernel_enter(i32)
// CHECK: llvm.func @dnnf_kernel_exit(i32)
// CHECK-LABEL: llvm.func @entry(
// CHECK-NEXT: llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[BUFFER:.*]] = llvm.call @malloc
// CHECK-NEXT: %[[L0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.call @dnnf_kernel_enter(%[[L0]]) : (i32) -> ()
// CHECK-NEXT: llvm.call @kernel_0_relu(%arg0, %[[BUFFER]])
// CHECK-NEXT: llvm.call @dnnf_kernel_exit(%[[L0]]) : (i32) -> ()
// CHECK-NEXT: %[[L1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.call @dnnf_kernel_enter(%[[L1]])
// CHECK-NEXT: llvm.call @kernel_1_neg(%[[BUFFER]], %arg1)
// CHECK-NEXT: llvm.call @dnnf_kernel_exit(%[[L1]])
// CHECK-NEXT: %[[L2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.call @dnnf_kernel_enter(%[[L2]])
// CHECK-NEXT: llvm.call @kernel_0_relu(%arg1, %arg1)
// CHECK-NEXT: llvm.call @dnnf_kernel_exit(%[[L2]])
// CHECK-NEXT: llvm.call @free(%[[BUFFER]])
// The kernels themselves are not instrumented.
// CHECK-LABEL: llvm.func internal @kernel_0_relu(
// CHECK-NOT: dnnf_kernel_enter
// CHECK: llvm.return
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func @entry(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
    %size = llvm.mlir.constant(16 : i64) : i64
    %buffer = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
    llvm.call @kernel_0_relu(%arg0, %buffer) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @kernel_1_neg(%buffer, %arg1) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @kernel_0_relu(%arg1, %arg1) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @free(%buffer) : (!llvm.ptr) -> ()
    llvm.return
  }
  llvm.func internal @kernel_0_relu(%in: !llvm.ptr, %out: !llvm.ptr) attributes {dnnf.kernel, dnnf.kernel.bytes = 48 : i64, dnnf.kernel.flops = 4 : i64, dnnf.kernel.ops = "relu", dnnf.kernel.shapes = "4xf32 -> 4xf32", no_inline} {
    llvm.return
  }
  llvm.func internal @kernel_1_neg(%in: !llvm.ptr, %out: !llvm.ptr) attributes {dnnf.kernel, no_inline} {
    llvm.return
  }
}
