// Gathers read their source through its 1-d view, which MLIR's vectorizer vectorizes
// (an n-d tensor.extract it left scalar): a gathered row is one contiguous vector
// load, a gather of elements one vector.gather over 32-bit offsets.
// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 | FileCheck %s

// Rows of a table (GatherND, an embedding): the row's start from the index, then a
// vector load at it, read from lane 0 (every lane has the same row).
// CHECK-LABEL: func.func @rows
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<100x64xf32> into tensor<6400xf32>
// CHECK: scf.for
// CHECK: %[[AT:.*]] = vector.extract %{{.*}}[0, 0] : index from vector<1x32xindex>
// CHECK: vector.transfer_read %[[FLAT]][%[[AT]]], %{{.*}} : tensor<6400xf32>, vector<1x32xf32>
// CHECK-NOT: vector.gather
// CHECK-NOT: linalg.generic
func.func @rows(%table: tensor<100x64xf32>, %ids: tensor<12xi64>) -> tensor<12x64xf32> {
  %0 = "ecg.gather"(%table, %ids) {axis = 0 : i64} : (tensor<100x64xf32>, tensor<12xi64>) -> tensor<12x64xf32>
  return %0 : tensor<12x64xf32>
}

// -----

// GatherElements along the outer axis: the innermost loop index is part of the
// offset but the index read changes with it too, so the read is a gather (not the
// contiguous load that an index sum of the innermost loop index would be taken for).
// CHECK-LABEL: func.func @elements
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<4x64xf32> into tensor<256xf32>
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<1x32xi32>
// CHECK: %[[OFFSETS:.*]] = arith.index_cast %[[AT]] : vector<1x32xi32> to vector<1x32xindex>
// CHECK: vector.gather %[[FLAT]][%c0{{.*}}] [%[[OFFSETS]]]
// CHECK-NOT: linalg.generic
func.func @elements(%x: tensor<4x64xf32>, %ids: tensor<4x64xi64>) -> tensor<4x64xf32> {
  %0 = "ecg.gather_elements"(%x, %ids) {axis = 0 : i64} : (tensor<4x64xf32>, tensor<4x64xi64>) -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}
