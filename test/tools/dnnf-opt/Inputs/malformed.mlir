func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {
  // The result shape is wrong.
  %0 = "ecg.relu"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
