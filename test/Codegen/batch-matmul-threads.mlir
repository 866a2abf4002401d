// A batch matmul shaped like Winograd's (36 points, 196 tile columns: 7 column tiles,
// which two threads cannot share evenly) on two threads: the forall splits the batch
// (each thread packs the B panels of its own 18 points), not the rows (both threads
// would pack every panel).
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=2 --emit=schedules | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=2 --emit=mlir --stop-after=schedule | FileCheck %s --check-prefix=IR

// CHECK: linalg.batch_matmul [36, 64, 196, 64] matmul {{.*}}'peeled': 'n', 'forall': [18, 0, 0, 0]

// The 196 columns are 6 whole tiles of 32 and a partial one of 4, peeled off (no padded
// copy of the operands).
// IR-LABEL: func.func @points
// IR: scf.forall (%{{.*}}) in (2) shared_outs
// IR: scf.for %{{.*}} = %c0 to %c192 step %c32
// IR: vector.contract {{.*}} into vector<1x8x32xf32>
// IR: vector.contract {{.*}} into vector<1x8x4xf32>
// IR: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, 0] [18, 64, 196] [1, 1, 1]

func.func @points(%u: tensor<36x64x64xf32>, %v: tensor<36x64x196xf32>) -> tensor<36x64x196xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<36x64x196xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<36x64x196xf32>) -> tensor<36x64x196xf32>
  %r = linalg.batch_matmul ins(%u, %v : tensor<36x64x64xf32>, tensor<36x64x196xf32>) outs(%init : tensor<36x64x196xf32>) -> tensor<36x64x196xf32>
  return %r : tensor<36x64x196xf32>
}
