// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg --verify-diagnostics
// Without --verify-diagnostics the error is printed at the op and dnnf-opt fails.
// RUN: not dnnf-opt %s --split-input-file --convert-ecg-to-linalg 2>&1 | FileCheck %s
// CHECK: invalid.mlir:[[# @LINE + 10]]:8: error: failed to legalize operation 'ecg.resize': no lowering to linalg in convert-ecg-to-linalg
// CHECK: invalid.mlir:[[# @LINE + 18]]:10: error: failed to legalize operation 'ecg.conv_transpose'
// CHECK: error: failed to legalize operation 'ecg.conv': grouped 3-d convolution
// CHECK: error: failed to legalize operation 'ecg.add': unsigned element type ui8

// An op without a lowering fails the pass at the op; nothing is rewritten, not even
// the ops that could be lowered.
func.func @no_lowering(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = "ecg.relu"(%x) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  // expected-error @+1 {{failed to legalize operation 'ecg.resize': no lowering to linalg in convert-ecg-to-linalg}}
  %1 = "ecg.resize"(%0) {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, mode = "nearest", nearest_mode = "round_prefer_floor", scales = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>, sizes = array<i64: 1, 1, 4, 4>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %1 : tensor<1x1x4x4xf32>
}

// -----

func.func @no_lowering_in_fused_body(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32> {
  %0 = "ecg.fused"(%x, %w) ({
  ^bb0(%a: tensor<1x1x2x2xf32>, %b: tensor<1x1x2x2xf32>):
    // expected-error @+1 {{failed to legalize operation 'ecg.conv_transpose': no lowering to linalg in convert-ecg-to-linalg}}
    %1 = "ecg.conv_transpose"(%a, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 2, 2>, operandSegmentSizes = array<i32: 1, 1, 0>, output_padding = array<i64: 0, 0>, output_shape = array<i64>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
    "ecg.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x1x3x3xf32>) -> ()
  }) {mapping = "Many-to-Many", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// A lowering that does not handle a configuration says which.
func.func @grouped_conv3d(%x: tensor<1x4x5x5x5xf32>, %w: tensor<4x2x3x3x3xf32>) -> tensor<1x4x3x3x3xf32> {
  // expected-error @+1 {{failed to legalize operation 'ecg.conv': grouped 3-d convolution (group 2) other than depthwise is not supported by convert-ecg-to-linalg}}
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1, 1>, group = 2 : i64, kernel_shape = array<i64: 3, 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x4x5x5x5xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x3x3x3xf32>
  return %0 : tensor<1x4x3x3x3xf32>
}

// -----

// arith works on signless integers only.
func.func @unsigned(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{failed to legalize operation 'ecg.add': unsigned element type ui8 (arith works on signless integers)}}
  %0 = "ecg.add"(%x, %x) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}
