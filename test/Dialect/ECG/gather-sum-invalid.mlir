// RUN: dnnf-opt %s --split-input-file --verify-diagnostics

func.func @weights_of_another_shape(%d: tensor<9x8xf32>, %i: tensor<4x6xi64>, %w: tensor<4x5xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{weights tensor<4x5xf32> must have the shape of the indices tensor<4x6xi64> and the type of the data tensor<9x8xf32>}}
  %0 = "ecg.gather_sum"(%d, %i, %w) : (tensor<9x8xf32>, tensor<4x6xi64>, tensor<4x5xf32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

func.func @indices_not_i64(%d: tensor<9x8xf32>, %i: tensor<4x6xi32>, %w: tensor<4x6xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{indices must be i64, got tensor<4x6xi32>}}
  %0 = "ecg.gather_sum"(%d, %i, %w) : (tensor<9x8xf32>, tensor<4x6xi32>, tensor<4x6xf32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

func.func @no_tap_axis(%d: tensor<9x8xf32>, %i: tensor<6xi64>, %w: tensor<6xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{indices must have a tap axis and at least one more, got tensor<6xi64>}}
  %0 = "ecg.gather_sum"(%d, %i, %w) : (tensor<9x8xf32>, tensor<6xi64>, tensor<6xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @integer_data(%d: tensor<9x8xi32>, %i: tensor<4x6xi64>, %w: tensor<4x6xi32>) -> tensor<6x8xi32> {
  // expected-error @+1 {{data must be a 2-d float tensor, got tensor<9x8xi32>}}
  %0 = "ecg.gather_sum"(%d, %i, %w) : (tensor<9x8xi32>, tensor<4x6xi64>, tensor<4x6xi32>) -> tensor<6x8xi32>
  return %0 : tensor<6x8xi32>
}
