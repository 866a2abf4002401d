// lowering/gpu/vector-lowering.mlir, the transform library that brings a GPU kernel's
// vectors to what SPIR-V takes, through stock passes: contiguous transfers become
// vector loads and stores, strided ones loops of scalar ones (a strided write once sent
// the pattern driver into an endless loop).
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=%lowering/gpu/vector-lowering.mlir},transform-interpreter{entry-point=__dnnf_gpu_lower_vectors})' | FileCheck %s

// CHECK-LABEL: gpu.func @contiguous
// CHECK: vector.load {{.*}} : memref<1x50xf32>, vector<4xf32>
// CHECK: vector.store {{.*}} : memref<4xf32>, vector<4xf32>
// CHECK-NOT: vector.transfer
gpu.module @m {
  gpu.func @contiguous(%a: memref<1x50xf32>, %o: memref<4xf32>, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %f = arith.constant 0.0 : f32
    %v = vector.transfer_read %a[%c0, %j], %f {in_bounds = [true]} : memref<1x50xf32>, vector<4xf32>
    vector.transfer_write %v, %o[%c0] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
    gpu.return
  }
}

// -----

// CHECK-LABEL: gpu.func @strided_write
// CHECK: scf.for %[[I:.*]] = %c0 to %c2
// CHECK: %[[X:.*]] = vector.extract %{{.*}}[%[[I]]]
// CHECK: memref.store %[[X]], %{{.*}}[%c0, %c0, %[[I]], %{{.*}}] : memref<1x1x50x50xf32>
// CHECK-NOT: vector.transfer
gpu.module @m {
  gpu.func @strided_write(%a: memref<1x1x50x50xf32>, %v: vector<2xf32>, %j: index) kernel {
    %c0 = arith.constant 0 : index
    vector.transfer_write %v, %a[%c0, %c0, %c0, %j] {in_bounds = [true], permutation_map = affine_map<(d0, d1, d2, d3) -> (d2)>} : vector<2xf32>, memref<1x1x50x50xf32>
    gpu.return
  }
}

// -----

// CHECK-LABEL: gpu.func @strided_read
// CHECK: scf.for %[[I:.*]] = %c0 to %c2
// CHECK: memref.load %{{.*}}[%c0, %c0, %[[I]], %{{.*}}] : memref<1x1x50x50xi1>
// CHECK-NOT: vector.transfer
gpu.module @m {
  gpu.func @strided_read(%a: memref<1x1x50x50xi1>, %o: memref<2xi1>, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %f = arith.constant false
    %v = vector.transfer_read %a[%c0, %c0, %c0, %j], %f {in_bounds = [true], permutation_map = affine_map<(d0, d1, d2, d3) -> (d2)>} : memref<1x1x50x50xi1>, vector<2xi1>
    vector.transfer_write %v, %o[%c0] {in_bounds = [true]} : vector<2xi1>, memref<2xi1>
    gpu.return
  }
}
