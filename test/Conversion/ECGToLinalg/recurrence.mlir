// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR survives canonicalization and bufferization (as the CPU pipeline runs it).
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops})' -o /dev/null

// An LSTM direction is one scf.for over the 5 steps, carrying the output sequence and both
// states: R^T is built once before the loop; each step reads its slice of the projected
// inputs, multiplies the hidden state with R^T (one small matmul), applies the gates and
// writes its hidden state into the output at its step. The loop is marked as a loop over
// time steps (the code generator keeps its body on one thread, its buffers its own).
// CHECK-LABEL: func.func @lstm
// CHECK: linalg.transpose ins(%arg1 : tensor<8x2xf32>)
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}, %[[H:.*]] = %arg3, %[[C:.*]] = %arg4) -> (tensor<5x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK: tensor.extract_slice %arg0[%[[STEP]], 0, 0] [1, 2, 8] [1, 1, 1] : tensor<5x2x8xf32> to tensor<2x8xf32>
// CHECK: linalg.matmul ins(%[[H]], %{{.*}} : tensor<2x2xf32>, tensor<2x8xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[OUT]][%[[STEP]], 0, 0] [1, 2, 2] [1, 1, 1] : tensor<2x2xf32> into tensor<5x2x2xf32>
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<5x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT: } {dnnf.time_steps}
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @lstm(%p: tensor<5x2x8xf32>, %r: tensor<8x2xf32>, %peep: tensor<6xf32>, %h: tensor<2x2xf32>, %c: tensor<2x2xf32>) -> (tensor<5x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %0:3 = "ecg.lstm_recurrence"(%p, %r, %peep, %h, %c) {activation_alpha = dense<0.0> : tensor<3xf64>, activation_beta = dense<0.0> : tensor<3xf64>, activations = "sigmoid,tanh,tanh", clip = 0x7FF0000000000000 : f64, input_forget = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<5x2x8xf32>, tensor<8x2xf32>, tensor<6xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<5x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<5x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Backwards with sequence lengths: iteration i is step 3 - i; a step compares its index with
// the lengths to keep the old state past a sequence's end, and after the loop the states of
// empty sequences are zeroed.
// CHECK-LABEL: func.func @rnn_reverse_masked
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[STEP:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK: arith.index_cast %[[STEP]] : index to i32
// CHECK: arith.cmpi slt
// CHECK: tensor.extract_slice %arg0[%[[STEP]], 0, 0] [1, 3, 2] [1, 1, 1]
// CHECK: linalg.matmul
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: return
func.func @rnn_reverse_masked(%p: tensor<4x3x2xf32>, %r: tensor<2x2xf32>, %h: tensor<3x2xf32>, %lengths: tensor<3xi32>) -> (tensor<4x3x2xf32>, tensor<3x2xf32>) {
  %0:2 = "ecg.rnn_recurrence"(%p, %r, %h, %lengths) {activation_alpha = dense<0.0> : tensor<1xf64>, activation_beta = dense<0.0> : tensor<1xf64>, activations = "tanh", clip = 0x7FF0000000000000 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1>, reverse = 1 : i64} : (tensor<4x3x2xf32>, tensor<2x2xf32>, tensor<3x2xf32>, tensor<3xi32>) -> (tensor<4x3x2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<4x3x2xf32>, tensor<3x2xf32>
}

// -----

// A GRU multiplies with R's z|r rows and its h rows apart (two matmuls a step), both
// transposed before the loop.
// CHECK-LABEL: func.func @gru
// CHECK-COUNT-2: linalg.transpose
// CHECK: scf.for
// CHECK-COUNT-2: linalg.matmul
// CHECK: scf.yield
func.func @gru(%p: tensor<3x1x6xf32>, %r: tensor<6x2xf32>, %rb: tensor<6xf32>, %h: tensor<1x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x2xf32>) {
  %0:2 = "ecg.gru_recurrence"(%p, %r, %rb, %h) {activation_alpha = dense<0.0> : tensor<2xf64>, activation_beta = dense<0.0> : tensor<2xf64>, activations = "sigmoid,tanh", clip = 0x7FF0000000000000 : f64, linear_before_reset = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, reverse = 0 : i64} : (tensor<3x1x6xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<1x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x2xf32>)
  return %0#0, %0#1 : tensor<3x1x2xf32>, tensor<1x2xf32>
}
