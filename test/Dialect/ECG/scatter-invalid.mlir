// RUN: dnnf-opt %s --split-input-file --verify-diagnostics

func.func @unknown_reduction(%d: tensor<8xf32>, %i: tensor<3xi64>, %u: tensor<3xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{reduction 'sum' is not one of ['none', 'add', 'mul', 'max', 'min']}}
  %0 = "ecg.scatter_elements"(%d, %i, %u) {axis = 0 : i64, reduction = "sum"} : (tensor<8xf32>, tensor<3xi64>, tensor<3xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @float_indices(%d: tensor<8xf32>, %i: tensor<3xf32>, %u: tensor<3xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{indices must be i32 or i64}}
  %0 = "ecg.scatter_elements"(%d, %i, %u) {axis = 0 : i64, reduction = "none"} : (tensor<8xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @updates_of_another_shape(%d: tensor<6x9xf32>, %i: tensor<4x7xi64>, %u: tensor<4x6xf32>) -> tensor<6x9xf32> {
  // expected-error @+1 {{must have one shape}}
  %0 = "ecg.scatter_elements"(%d, %i, %u) {axis = 1 : i64, reduction = "none"} : (tensor<6x9xf32>, tensor<4x7xi64>, tensor<4x6xf32>) -> tensor<6x9xf32>
  return %0 : tensor<6x9xf32>
}

// -----

func.func @tuples_too_long(%d: tensor<5x6xf32>, %i: tensor<3x3xi64>, %u: tensor<3xf32>) -> tensor<5x6xf32> {
  // expected-error @+1 {{must end in tuples of at most 2 indices}}
  %0 = "ecg.scatter_nd"(%d, %i, %u) {reduction = "none"} : (tensor<5x6xf32>, tensor<3x3xi64>, tensor<3xf32>) -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}

// -----

func.func @rows_of_another_shape(%d: tensor<5x6xf32>, %i: tensor<3x1xi64>, %u: tensor<3x5xf32>) -> tensor<5x6xf32> {
  // expected-error @+1 {{updates tensor<3x5xf32> must have the shape [3, 6]}}
  %0 = "ecg.scatter_nd"(%d, %i, %u) {reduction = "add"} : (tensor<5x6xf32>, tensor<3x1xi64>, tensor<3x5xf32>) -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}
