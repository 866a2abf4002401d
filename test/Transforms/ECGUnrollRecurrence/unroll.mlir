// RUN: dnnf-opt %s --split-input-file --ecg-unroll-recurrence | FileCheck %s --implicit-check-not=ecg.rnn_recurrence --implicit-check-not=ecg.lstm_recurrence

// Three steps, three matmuls of the hidden state with R^T (transposed once), each step's
// slice of the projected inputs added, tanh; the steps' states joined into the sequence.
// CHECK-LABEL: func.func @rnn
// CHECK: %[[RT:.*]] = "ecg.transpose"(%arg1)
// CHECK: %[[X0:.*]] = "ecg.slice"(%arg0) {{.*}}starts = array<i64: 0>
// CHECK: %[[M0:.*]] = "ecg.mat_mul"(%arg2, %[[RT]])
// CHECK: %[[S0:.*]] = "ecg.add"(%[[M0]], %{{.*}})
// CHECK: %[[H1:.*]] = "ecg.tanh"(%[[S0]])
// CHECK: "ecg.mat_mul"(%[[H1]], %[[RT]])
// CHECK: "ecg.tanh"
// CHECK: "ecg.mat_mul"
// CHECK: %[[H3:.*]] = "ecg.tanh"
// CHECK-NOT: "ecg.mat_mul"
// CHECK: "ecg.concat"
// CHECK: return %{{.*}}, %[[H3]]
func.func @rnn(%p: tensor<3x1x2xf32>, %r: tensor<2x2xf32>, %h: tensor<1x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x2xf32>) {
  %0:2 = "ecg.rnn_recurrence"(%p, %r, %h) {activation_alpha = dense<0.0> : tensor<1xf64>, activation_beta = dense<0.0> : tensor<1xf64>, activations = "tanh", clip = 0x7FF0000000000000 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<3x1x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x2xf32>)
  return %0#0, %0#1 : tensor<3x1x2xf32>, tensor<1x2xf32>
}

// -----

// A zero initial state and no peepholes (all-zero constants) cost nothing: the first of the
// two steps has no matmul, and no step multiplies with the peepholes.
// CHECK-LABEL: func.func @lstm_from_zero
// CHECK-COUNT-1: "ecg.mat_mul"
// CHECK-NOT: "ecg.mat_mul"
// CHECK: return
func.func @lstm_from_zero(%p: tensor<2x1x8xf32>, %r: tensor<8x2xf32>) -> tensor<2x1x2xf32> {
  %peep = "ecg.constant"() {value = dense<0.0> : tensor<6xf32>} : () -> tensor<6xf32>
  %zero = "ecg.constant"() {value = dense<0.0> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %0:3 = "ecg.lstm_recurrence"(%p, %r, %peep, %zero, %zero) {activation_alpha = dense<0.0> : tensor<3xf64>, activation_beta = dense<0.0> : tensor<3xf64>, activations = "sigmoid,tanh,tanh", clip = 0x7FF0000000000000 : f64, input_forget = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<2x1x8xf32>, tensor<8x2xf32>, tensor<6xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<2x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  return %0#0 : tensor<2x1x2xf32>
}
