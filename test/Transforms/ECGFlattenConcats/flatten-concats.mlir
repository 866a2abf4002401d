// RUN: dnnf-opt %s --split-input-file --ecg-flatten-concats | FileCheck %s

// A DenseNet block: each layer's concat extends the one before, which its batch
// normalization (here: the function's results) reads too. Each concat gets a chain of its
// own over the pieces (ECG's concat is binary), so no concat reads another that is read
// elsewhere: the second reads %x, %a, %b; the third %x, %a, %b, %c.
// CHECK-LABEL: func.func @dense_block
// CHECK-SAME:      (%[[X:[^:]*]]: tensor<1x2x3x3xf32>, %[[A:[^:]*]]: tensor<1x1x3x3xf32>, %[[B:[^:]*]]: tensor<1x1x3x3xf32>, %[[C:[^:]*]]: tensor<1x1x3x3xf32>)
// CHECK-NEXT:    %[[C1:.*]] = "ecg.concat"(%[[X]], %[[A]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[C1B:.*]] = "ecg.concat"(%[[X]], %[[A]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[C2:.*]] = "ecg.concat"(%[[C1B]], %[[B]]) {axis = -3 : i64}
// CHECK-NEXT:    %[[C1C:.*]] = "ecg.concat"(%[[X]], %[[A]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[C2C:.*]] = "ecg.concat"(%[[C1C]], %[[B]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[C3:.*]] = "ecg.concat"(%[[C2C]], %[[C]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[C1]], %[[C2]], %[[C3]]
func.func @dense_block(%x: tensor<1x2x3x3xf32>, %a: tensor<1x1x3x3xf32>, %b: tensor<1x1x3x3xf32>, %c: tensor<1x1x3x3xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x5x3x3xf32>) {
  %0 = "ecg.concat"(%x, %a) {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  %1 = "ecg.concat"(%0, %b) {axis = -3 : i64} : (tensor<1x3x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %2 = "ecg.concat"(%1, %c) {axis = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x5x3x3xf32>
  return %0, %1, %2 : tensor<1x3x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x5x3x3xf32>
}

// -----

// An ONNX Concat of three (a chain whose inner concat has no other reader), a concat of
// a concat along another axis, and a concat read twice by one concat: unchanged.
// CHECK-LABEL: func.func @unchanged
// CHECK-NEXT:    %[[AB:.*]] = "ecg.concat"(%arg0, %arg1) {axis = 1 : i64}
// CHECK-NEXT:    %[[ABC:.*]] = "ecg.concat"(%[[AB]], %arg2) {axis = 1 : i64}
// CHECK-NEXT:    %[[ROWS:.*]] = "ecg.concat"(%[[ABC]], %[[ABC]]) {axis = 2 : i64}
// CHECK-NEXT:    %[[TWICE:.*]] = "ecg.concat"(%arg0, %arg0) {axis = 1 : i64}
// CHECK-NEXT:    return %[[ROWS]], %[[TWICE]]
func.func @unchanged(%x: tensor<1x2x3x3xf32>, %a: tensor<1x1x3x3xf32>, %b: tensor<1x1x3x3xf32>) -> (tensor<1x4x6x3xf32>, tensor<1x4x3x3xf32>) {
  %0 = "ecg.concat"(%x, %a) {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  %1 = "ecg.concat"(%0, %b) {axis = 1 : i64} : (tensor<1x3x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %2 = "ecg.concat"(%1, %1) {axis = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x3xf32>
  %3 = "ecg.concat"(%x, %x) {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %2, %3 : tensor<1x4x6x3xf32>, tensor<1x4x3x3xf32>
}
