// Rewrites that must not fire. One that would compute something twice: an
// intermediate result with other users stays, so the rule gains nothing (or loses).
// Broadcasting is costed too: combining two small operands before a large op is no
// gain. Integer division truncates, so a Div is not factored out of integer sums.
// RUN: dnnf-opt %s --split-input-file --ecg-rewrite | FileCheck %s

// Exp(A) is returned as well: Exp(A + B) would still need Exp(A).
// CHECK-LABEL: func.func @shared_exp
// CHECK:         %[[EA:.*]] = "ecg.exp"(%arg0)
// CHECK-NEXT:    %[[EB:.*]] = "ecg.exp"(%arg1)
// CHECK-NEXT:    %[[M:.*]] = "ecg.mul"(%[[EA]], %[[EB]])
// CHECK-NEXT:    return %[[M]], %[[EA]]
func.func @shared_exp(%a: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = "ecg.exp"(%a) : (tensor<64xf32>) -> tensor<64xf32>
  %1 = "ecg.exp"(%b) : (tensor<64xf32>) -> tensor<64xf32>
  %2 = "ecg.mul"(%0, %1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %2, %0 : tensor<64xf32>, tensor<64xf32>
}

// -----

// A ⊙ B is also used by the Relu: factoring A out of A ⊙ B + A ⊙ C saves nothing.
// CHECK-LABEL: func.func @shared_product
// CHECK:         %[[AB:.*]] = "ecg.mul"(%arg0, %arg1)
// CHECK-NEXT:    %[[AC:.*]] = "ecg.mul"(%arg0, %arg2)
// CHECK-NEXT:    %[[S:.*]] = "ecg.add"(%[[AB]], %[[AC]])
// CHECK-NEXT:    %[[R:.*]] = "ecg.relu"(%[[AB]])
// CHECK-NEXT:    return %[[S]], %[[R]]
func.func @shared_product(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = "ecg.mul"(%a, %b) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %1 = "ecg.mul"(%a, %c) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %2 = "ecg.add"(%0, %1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %3 = "ecg.relu"(%0) : (tensor<64xf32>) -> tensor<64xf32>
  return %2, %3 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Exp(A) ⊙ Exp(B) with A 8x1 and B 1x8: Exp(A + B) would take 64 exponentials instead of 16.
// CHECK-LABEL: func.func @broadcast_exp
// CHECK:         %[[EA:.*]] = "ecg.exp"(%arg0) : (tensor<8x1xf32>)
// CHECK-NEXT:    %[[EB:.*]] = "ecg.exp"(%arg1) : (tensor<1x8xf32>)
// CHECK-NEXT:    %[[M:.*]] = "ecg.mul"(%[[EA]], %[[EB]])
func.func @broadcast_exp(%a: tensor<8x1xf32>, %b: tensor<1x8xf32>) -> tensor<8x8xf32> {
  %0 = "ecg.exp"(%a) : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %1 = "ecg.exp"(%b) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %2 = "ecg.mul"(%0, %1) : (tensor<8x1xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

// The same with A 8x8: combining first is no worse (64 additions, 64 exponentials
// instead of 64 + 8 exponentials and 64 products), so it fires.
// CHECK-LABEL: func.func @broadcast_exp_large
// CHECK:         %[[S:.*]] = "ecg.add"(%arg0, %arg1) : (tensor<8x8xf32>, tensor<1x8xf32>)
// CHECK-NEXT:    %[[E:.*]] = "ecg.exp"(%[[S]])
func.func @broadcast_exp_large(%a: tensor<8x8xf32>, %b: tensor<1x8xf32>) -> tensor<8x8xf32> {
  %0 = "ecg.exp"(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = "ecg.exp"(%b) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %2 = "ecg.mul"(%0, %1) : (tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

// (7 + 7) / 2 is 7 but 7 / 2 + 7 / 2 is 6: both divisions stay.
// CHECK-LABEL: func.func @integer_division
// CHECK:         "ecg.div"(%arg1, %arg0)
// CHECK-NEXT:    "ecg.div"(%arg2, %arg0)
// CHECK-NEXT:    "ecg.add"
func.func @integer_division(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "ecg.div"(%b, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "ecg.div"(%c, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = "ecg.add"(%0, %1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %2 : tensor<4xi32>
}
