// TopK on a GPU (codegen/gpu/loop_kernels.py): its lowering is a loop over rows whose
// iterations write disjoint rows (marked dnnf.independent_iterations), run a row per
// thread; a single row's loop folds away, and what is left (loads, the loops over the
// slots and the elements, one carrying the k-th value in registers) runs in a single
// invocation. That was refused: `a sequential loop of kernel_0 still returns a value
// after bufferization`.
// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | dnnf-opt --split-input-file \
// RUN:   --dnnf-codegen-prepare=target=vulkan | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | FileCheck %s

// 300 rows (3 x 100 around the axis): 5 workgroups of 64 threads, a row each, the
// last workgroup's surplus threads idle.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "per-op", dnnf.gpu.workgroup_size = 64
// CHECK-DAG: %[[ROWS:.+]] = arith.constant 300 : index
// CHECK-DAG: %[[GRID:.+]] = arith.constant 5 : index
// CHECK-DAG: %[[WG:.+]] = arith.constant 64 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[WG]],
// CHECK: %[[BLOCK:.+]] = gpu.block_id x
// CHECK: %[[THREAD:.+]] = gpu.thread_id x
// CHECK: %[[FIRST:.+]] = arith.muli %[[BLOCK]], %{{.+}} : index
// CHECK: %[[ROW:.+]] = arith.addi %[[FIRST]], %[[THREAD]] : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: arith.divui %[[ROW]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<3x17x100xf32>) -> (tensor<3x4x100xf32>, tensor<3x4x100xi64>) attributes {dnnf.kernel} {
  %0:2 = "ecg.top_k"(%x) {axis = 1 : i64, k = 4 : i64, largest = 1 : i64} : (tensor<3x17x100xf32>) -> (tensor<3x4x100xf32>, tensor<3x4x100xi64>)
  return %0#0, %0#1 : tensor<3x4x100xf32>, tensor<3x4x100xi64>
}

func.func @main(%x: tensor<3x17x100xf32>) -> (tensor<3x4x100xf32>, tensor<3x4x100xi64>) {
  %y:2 = call @kernel_0(%x) : (tensor<3x17x100xf32>) -> (tensor<3x4x100xf32>, tensor<3x4x100xi64>)
  return %y#0, %y#1 : tensor<3x4x100xf32>, tensor<3x4x100xi64>
}

// -----

// One row (a [32] vector, k = 26): one launch of one workgroup, everything in it.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "per-op"
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK: memref.load
// CHECK: scf.for
// CHECK: scf.for {{.*}} -> (f32, i1)
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<32xf32>) -> tensor<26xf32> attributes {dnnf.kernel} {
  %0:2 = "ecg.top_k"(%x) {axis = -1 : i64, k = 26 : i64, largest = 0 : i64} : (tensor<32xf32>) -> (tensor<26xf32>, tensor<26xi64>)
  return %0#0 : tensor<26xf32>
}

func.func @main(%x: tensor<32xf32>) -> tensor<26xf32> {
  %y = call @kernel_0(%x) : (tensor<32xf32>) -> tensor<26xf32>
  return %y : tensor<26xf32>
}
