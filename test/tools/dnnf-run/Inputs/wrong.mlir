// Computes relu(x) where gelu_mlp.onnxtxt computes a GELU MLP: --check must fail.
func.func @main(%x: tensor<2x4xf32> {onnx.name = "x"}) -> tensor<2x3xf32> {
  %0 = "ecg.slice"(%x) {axes = array<i64: 1>, ends = array<i64: 3>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %1 = "ecg.relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
