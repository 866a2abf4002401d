// RUN: dnnf-opt %s --split-input-file --verify-diagnostics

// R must have gates*hidden rows: an LSTM's projected inputs are 4*hidden wide.
func.func @lstm_rows(%p: tensor<5x2x8xf32>, %r: tensor<6x2xf32>, %peep: tensor<6xf32>, %h: tensor<2x2xf32>) -> tensor<5x2x2xf32> {
  // expected-error @+1 {{R must be [4*hidden, hidden] with 8 rows, got tensor<6x2xf32>}}
  %0:3 = "ecg.lstm_recurrence"(%p, %r, %peep, %h, %h) {activation_alpha = dense<0.0> : tensor<3xf64>, activation_beta = dense<0.0> : tensor<3xf64>, activations = "sigmoid,tanh,tanh", clip = 0x7FF0000000000000 : f64, input_forget = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<5x2x8xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<5x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0 : tensor<5x2x2xf32>
}

// -----

func.func @unknown_activation(%p: tensor<4x1x2xf32>, %r: tensor<2x2xf32>, %h: tensor<1x2xf32>) -> tensor<4x1x2xf32> {
  // expected-error @+1 {{activation 'swish' is not one of relu, tanh, sigmoid}}
  %0:2 = "ecg.rnn_recurrence"(%p, %r, %h) {activation_alpha = dense<0.0> : tensor<1xf64>, activation_beta = dense<0.0> : tensor<1xf64>, activations = "swish", clip = 0x7FF0000000000000 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<4x1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> (tensor<4x1x2xf32>, tensor<1x2xf32>)
  return %0#0 : tensor<4x1x2xf32>
}

// -----

func.func @lengths_of_another_batch(%p: tensor<4x1x2xf32>, %r: tensor<2x2xf32>, %h: tensor<1x2xf32>, %l: tensor<3xi32>) -> tensor<4x1x2xf32> {
  // expected-error @+1 {{lengths must have shape [1], got tensor<3xi32>}}
  %0:2 = "ecg.rnn_recurrence"(%p, %r, %h, %l) {activation_alpha = dense<0.0> : tensor<1xf64>, activation_beta = dense<0.0> : tensor<1xf64>, activations = "tanh", clip = 0x7FF0000000000000 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1>, reverse = 0 : i64} : (tensor<4x1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<3xi32>) -> (tensor<4x1x2xf32>, tensor<1x2xf32>)
  return %0#0 : tensor<4x1x2xf32>
}

// -----

func.func @clip_not_positive(%p: tensor<4x1x2xf32>, %r: tensor<2x2xf32>, %h: tensor<1x2xf32>) -> tensor<4x1x2xf32> {
  // expected-error @+1 {{clip must be positive, got 0.0}}
  %0:2 = "ecg.rnn_recurrence"(%p, %r, %h) {activation_alpha = dense<0.0> : tensor<1xf64>, activation_beta = dense<0.0> : tensor<1xf64>, activations = "tanh", clip = 0.0 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<4x1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> (tensor<4x1x2xf32>, tensor<1x2xf32>)
  return %0#0 : tensor<4x1x2xf32>
}
