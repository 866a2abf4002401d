// Errors of the rewriting passes are MLIR diagnostics at the function they concern.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --ecg-apply-rule

// expected-error@below {{ecg-apply-rule: unknown rewrite rule 'no-such-rule' (dnnf-opt --list-rewrite-rules lists them)}}
func.func @"no-such-rule"(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@below {{ecg-apply-rule: rule 'exp-mul-exp' does not match @exp-mul-exp}}
func.func @"exp-mul-exp"(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ecg.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
