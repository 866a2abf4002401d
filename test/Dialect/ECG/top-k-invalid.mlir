// RUN: dnnf-opt %s --split-input-file --verify-diagnostics

func.func @k_beyond_the_axis(%x: tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  // expected-error @+1 {{k = 5 must lie in [1, 4] (the extent of axis 1)}}
  %0:2 = "ecg.top_k"(%x) {axis = 1 : i64, k = 5 : i64, largest = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  return %0#0, %0#1 : tensor<3x5xf32>, tensor<3x5xi64>
}

// -----

func.func @booleans(%x: tensor<3x4xi1>) -> (tensor<3x2xi1>, tensor<3x2xi64>) {
  // expected-error @+1 {{input must be a float16/32/64 or integer tensor, got tensor<3x4xi1>}}
  %0:2 = "ecg.top_k"(%x) {axis = 1 : i64, k = 2 : i64, largest = 1 : i64} : (tensor<3x4xi1>) -> (tensor<3x2xi1>, tensor<3x2xi64>)
  return %0#0, %0#1 : tensor<3x2xi1>, tensor<3x2xi64>
}

// -----

func.func @indices_not_i64(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
  // expected-error @+1 {{do not match the inferred types (tensor<3x2xf32>, tensor<3x2xi64>)}}
  %0:2 = "ecg.top_k"(%x) {axis = 1 : i64, k = 2 : i64, largest = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xi32>
}
