// RUN: dnnf-opt %s --split-input-file --verify-diagnostics

func.func @add_shapes_do_not_broadcast(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'ecg.add' op operand shapes (2,), (3,) do not broadcast}}
  %0 = "ecg.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @wrong_result_shape(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result types (tensor<3x2xf32>) do not match the inferred types (tensor<2x3xf32>)}}
  %0 = "ecg.relu"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @mixed_element_types(%a: tensor<2xf32>, %b: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{operands must have one element type, got float32, int64}}
  %0 = "ecg.mul"(%a, %b) : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @float_only(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand must have a floating-point element type}}
  %0 = "ecg.exp"(%a) : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @attribute_kind(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute 'approximate' must be a string, got 3 : i64}}
  %0 = "ecg.gelu"(%a) {approximate = 3 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bit_shift_direction(%a: tensor<2xui8>) -> tensor<2xui8> {
  // expected-error @+1 {{'ecg.bit_shift' op direction 'UP' must be LEFT or RIGHT}}
  %0 = "ecg.bit_shift"(%a, %a) {direction = "UP"} : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{expected a static shape, got tensor<?xf32>}}
  %0 = "ecg.relu"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'ecg.conv' op}}
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{'ecg.reshape' op}}
  %0 = "ecg.reshape"(%x) {shape = array<i64: 7>} : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @fused_yield_types(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{yielded types must match the result types}}
  %0 = "ecg.fused"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    "ecg.yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {mapping = "One-to-One", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @fused_mapping(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mapping 'Diagonal' is not one of One-to-One, One-to-Many, Many-to-Many, Reorganize, Shuffle}}
  %0 = "ecg.fused"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    "ecg.yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {mapping = "Diagonal", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside_fused(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ecg.yield' op must be the last operation in the parent block}}
  "ecg.yield"(%a) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  return %a : tensor<4xf32>
}

// -----

func.func @missing_attribute(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'ecg.gelu' op requires attribute 'approximate'}}
  %0 = "ecg.gelu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
