// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The loop bufferizes in place: one buffer for the copy, none inside the loop.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF

// ScatterND with reduction add: the data copied once through its 1-d view, then one
// loop over the 12 update elements; each reads its tuple's two indices (negative ones
// wrapped, clamped into the data), the element there and the update, and inserts the sum.
// CHECK-LABEL: func.func @scatter_nd_add
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<5x6x4xf32> into tensor<120xf32>
// CHECK: %[[COPY:.*]] = linalg.copy {{.*}} ins(%[[FLAT]] : tensor<120xf32>)
// CHECK: %[[LOOP:.*]] = scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[COPY]]) -> (tensor<120xf32>)
// CHECK-COUNT-2: arith.minsi
// CHECK: %[[OLD:.*]] = tensor.extract %[[OUT]][%[[AT:.*]]] : tensor<120xf32>
// CHECK: %[[NEW:.*]] = tensor.extract %{{.*}}[%[[E]]] : tensor<12xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK: %[[IN:.*]] = tensor.insert %[[SUM]] into %[[OUT]][%[[AT]]] : tensor<120xf32>
// CHECK: scf.yield %[[IN]]
// CHECK: tensor.expand_shape %[[LOOP]]
// BUF-LABEL: func.func @scatter_nd_add
// BUF: memref.alloc() {{.*}} : memref<120xf32>
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: scf.yield
func.func @scatter_nd_add(%d: tensor<5x6x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x4xf32>) -> tensor<5x6x4xf32> {
  %0 = "ecg.scatter_nd"(%d, %i, %u) {reduction = "add"} : (tensor<5x6x4xf32>, tensor<3x2xi64>, tensor<3x4xf32>) -> tensor<5x6x4xf32>
  return %0 : tensor<5x6x4xf32>
}

// -----

// ScatterElements along axis 1 without a reduction: the update overwrites; its position
// is the update's coordinates with the one along axis 1 read from the indices.
// CHECK-LABEL: func.func @scatter_elements_none
// CHECK: linalg.copy
// CHECK: scf.for
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK-NOT: arith.addf
// CHECK: tensor.insert
// BUF-LABEL: func.func @scatter_elements_none
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: scf.yield
func.func @scatter_elements_none(%d: tensor<6x9xi32>, %i: tensor<4x7xi32>, %u: tensor<4x7xi32>) -> tensor<6x9xi32> {
  %0 = "ecg.scatter_elements"(%d, %i, %u) {axis = 1 : i64, reduction = "none"} : (tensor<6x9xi32>, tensor<4x7xi32>, tensor<4x7xi32>) -> tensor<6x9xi32>
  return %0 : tensor<6x9xi32>
}

// -----

// Reduction max on floats: arith.maximumf (NaN propagates, as in onnxruntime).
// CHECK-LABEL: func.func @scatter_elements_max
// CHECK: scf.for
// CHECK: arith.maximumf
func.func @scatter_elements_max(%d: tensor<8xf32>, %i: tensor<3xi64>, %u: tensor<3xf32>) -> tensor<8xf32> {
  %0 = "ecg.scatter_elements"(%d, %i, %u) {axis = 0 : i64, reduction = "max"} : (tensor<8xf32>, tensor<3xi64>, tensor<3xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
