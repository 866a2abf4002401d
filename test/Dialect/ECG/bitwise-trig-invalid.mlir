// RUN: dnnf-opt %s --split-input-file --verify-diagnostics

// The bitwise ops take integers only.
func.func @and_of_floats(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operands must not have element type f32}}
  %0 = "ecg.bitwise_and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @not_of_bools(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{operand must have an integer element type, not i1}}
  %0 = "ecg.bitwise_not"(%a) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// The trigonometric functions take floats only.
func.func @tan_of_integers(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand must have a floating-point element type, got tensor<4xi32>}}
  %0 = "ecg.tan"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
