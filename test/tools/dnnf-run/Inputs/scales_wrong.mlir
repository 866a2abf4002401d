// Computes x * [1000, 0.002] where scales.onnxtxt computes x * [1000, 0.001]: the wrong
// column is a million times smaller than the right one, so an error relative to the
// largest magnitude (1e-6) would pass it; the element-wise check must fail.
func.func @main(%x: tensor<3x2xf32> {onnx.name = "x"}) -> tensor<3x2xf32> {
  %0 = "ecg.constant"() {value = dense<[1.000000e+03, 2.000000e-03]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = "ecg.mul"(%x, %0) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
