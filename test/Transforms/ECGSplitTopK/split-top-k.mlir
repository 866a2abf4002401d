// RUN: dnnf-opt %s --split-input-file --ecg-split-top-k=max-iterations=2000 | FileCheck %s

// Within the budget (5 + 1000 / 16 + 1000 * 6 = 6067 of the default 65535): unchanged.
// RUN: dnnf-opt %s --split-input-file --ecg-split-top-k | FileCheck %s --check-prefix=FITS

// Rows of 1001 along a middle axis, the smallest 5: chunks of at most 283 (5 + 283 / 16
// + 283 * 6 <= 2000), so 4 of 251, the last padded with +inf (3 elements); each chunk's
// indices offset by its first; the 20 winners' TopK, whose indices pick the row's.
// CHECK-LABEL: func.func @two_levels_middle_axis
// CHECK: %[[PAD:.*]] = "ecg.pad"(%arg0) {constant_value = 0x7FF0000000000000 : f64, mode = "constant", pads = array<i64: 0, 0, 0, 0, 3, 0>}
// CHECK: %[[CHUNKS:.*]] = "ecg.reshape"(%[[PAD]]) {shape = array<i64: 3, 4, 251, 2>}
// CHECK: %[[TOP:.*]]:2 = "ecg.top_k"(%[[CHUNKS]]) {axis = 2 : i64, k = 5 : i64, largest = 0 : i64}
// CHECK: %[[FIRSTS:.*]] = "ecg.constant"() {value = dense<{{\[\[\[}}0]], {{\[\[}}251]], {{\[\[}}502]], {{\[\[}}753]]]> : tensor<4x1x1xi64>}
// CHECK: %[[AT:.*]] = "ecg.add"(%[[TOP]]#1, %[[FIRSTS]])
// CHECK: %[[VALUES:.*]] = "ecg.reshape"(%[[TOP]]#0) {shape = array<i64: 3, 20, 2>}
// CHECK: %[[POSITIONS:.*]] = "ecg.reshape"(%[[AT]]) {shape = array<i64: 3, 20, 2>}
// CHECK: %[[BEST:.*]]:2 = "ecg.top_k"(%[[VALUES]]) {axis = 1 : i64, k = 5 : i64, largest = 0 : i64} : (tensor<3x20x2xf32>)
// CHECK: %[[INDICES:.*]] = "ecg.gather_elements"(%[[POSITIONS]], %[[BEST]]#1) {axis = 1 : i64}
// CHECK: return %[[BEST]]#0, %[[INDICES]]
// FITS-LABEL: func.func @two_levels_middle_axis
// FITS-NEXT: "ecg.top_k"(%arg0) {axis = 1 : i64, k = 5 : i64, largest = 0 : i64}
// FITS-NEXT: return
func.func @two_levels_middle_axis(%x: tensor<3x1001x2xf32>) -> (tensor<3x5x2xf32>, tensor<3x5x2xi64>) {
  %v, %i = "ecg.top_k"(%x) {axis = 1 : i64, k = 5 : i64, largest = 0 : i64} : (tensor<3x1001x2xf32>) -> (tensor<3x5x2xf32>, tensor<3x5x2xi64>)
  return %v, %i : tensor<3x5x2xf32>, tensor<3x5x2xi64>
}

// -----

// k = 40 (a heap: a sift of 5 steps per entry) over 2001 i32, the largest: 8 chunks of 251
// padded with the i32 minimum, their 320 winners still past the budget: 2 chunks of 160,
// then the 80 winners' TopK; the last indices pick the second level's, which pick the first's.
// CHECK-LABEL: func.func @three_levels_of_integers
// CHECK: "ecg.pad"(%arg0) {constant_value = 0xC1E0000000000000 : f64, mode = "constant", pads = array<i64: 0, 7>}
// CHECK: "ecg.top_k"(%{{.*}}) {axis = 1 : i64, k = 40 : i64, largest = 1 : i64} : (tensor<8x251xi32>)
// CHECK: %[[FIRST:.*]] = "ecg.reshape"(%{{.*}}) {shape = array<i64: 320>} : (tensor<8x40xi64>)
// CHECK: "ecg.top_k"(%{{.*}}) {axis = 1 : i64, k = 40 : i64, largest = 1 : i64} : (tensor<2x160xi32>)
// CHECK: %[[SECOND:.*]] = "ecg.reshape"(%{{.*}}) {shape = array<i64: 80>} : (tensor<2x40xi64>)
// CHECK: %[[PICKED:.*]] = "ecg.gather_elements"(%[[FIRST]], %[[SECOND]]) {axis = 0 : i64}
// CHECK: %[[BEST:.*]]:2 = "ecg.top_k"(%{{.*}}) {axis = 0 : i64, k = 40 : i64, largest = 1 : i64} : (tensor<80xi32>)
// CHECK: %[[INDICES:.*]] = "ecg.gather_elements"(%[[PICKED]], %[[BEST]]#1) {axis = 0 : i64}
// CHECK: return %[[BEST]]#0, %[[INDICES]]
func.func @three_levels_of_integers(%x: tensor<2001xi32>) -> (tensor<40xi32>, tensor<40xi64>) {
  %v, %i = "ecg.top_k"(%x) {axis = 0 : i64, k = 40 : i64, largest = 1 : i64} : (tensor<2001xi32>) -> (tensor<40xi32>, tensor<40xi64>)
  return %v, %i : tensor<40xi32>, tensor<40xi64>
}

// -----

// Rows that fit: unchanged.
// CHECK-LABEL: func.func @fits
// CHECK-NEXT: "ecg.top_k"(%arg0) {axis = 1 : i64, k = 3 : i64, largest = 1 : i64}
// CHECK-NEXT: return
func.func @fits(%x: tensor<4x100xf16>) -> (tensor<4x3xf16>, tensor<4x3xi64>) {
  %v, %i = "ecg.top_k"(%x) {axis = 1 : i64, k = 3 : i64, largest = 1 : i64} : (tensor<4x100xf16>) -> (tensor<4x3xf16>, tensor<4x3xi64>)
  return %v, %i : tensor<4x3xf16>, tensor<4x3xi64>
}
