// Resize (One-to-Many) and ConvTranspose (Many-to-Many) under ecg-fuse's default
// planner (mode=dnnf, the conservative oracle for Y cells): Table 3's cells apply.
// RUN: dnnf-opt %s --split-input-file --ecg-fuse | FileCheck %s

// One-to-One -> One-to-Many -> One-to-One, all G: the Relu seeds a block that takes
// the Resize and the Add after it, which iterates over the Resize's larger result
// (the block's domain grows with it). Nothing is materialised but the sum.
// CHECK-LABEL: func.func @relu_resize_add
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0, %arg1) ({
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<1x4x8x8xf32>, %[[S:.*]]: tensor<1x4x16x16xf32>):
// CHECK-NEXT:      %[[R:.*]] = "ecg.relu"(%[[X]])
// CHECK-NEXT:      %[[U:.*]] = "ecg.resize"(%[[R]])
// CHECK-NEXT:      %[[A:.*]] = "ecg.add"(%[[U]], %[[S]])
// CHECK-NEXT:      "ecg.yield"(%[[A]])
// CHECK-NEXT:    }) {dnnf.ir_removable = array<i1: true, true, false>, mapping = "One-to-Many"
// CHECK-NEXT:    return %[[F]]
func.func @relu_resize_add(%x: tensor<1x4x8x8xf32>, %skip: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %0 = "ecg.relu"(%x) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %1 = "ecg.resize"(%0) {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>, sizes = array<i64: 1, 4, 16, 16>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
  %2 = "ecg.add"(%1, %skip) : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  return %2 : tensor<1x4x16x16xf32>
}

// -----

// Many-to-Many -> One-to-One is G: ConvTranspose takes its bias-free Relu epilogue.
// CHECK-LABEL: func.func @conv_transpose_relu
// CHECK:         "ecg.fused"(%arg0, %arg1) ({
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<1x4x8x8xf32>, %{{.*}}: tensor<4x2x2x2xf32>):
// CHECK-NEXT:      "ecg.conv_transpose"
// CHECK-NEXT:      "ecg.relu"
// CHECK-NEXT:      "ecg.yield"
// CHECK-NEXT:    }) {dnnf.ir_removable = array<i1: true, false>, mapping = "Many-to-Many"
func.func @conv_transpose_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32> {
  %0 = "ecg.conv_transpose"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 2, 2>, operandSegmentSizes = array<i32: 1, 1, 0>, output_padding = array<i64: 0, 0>, output_shape = array<i64>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32>
  %1 = "ecg.relu"(%0) : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  return %1 : tensor<1x2x16x16xf32>
}

// -----

// The Relu (the smallest result) seeds a block that takes the Resize and the Sigmoid
// after it (G, G); the Conv before it would be Many-to-Many -> One-to-Many, a Y cell
// the conservative oracle rejects.
// CHECK-LABEL: func.func @conv_resize_sigmoid
// CHECK:         %[[C:.*]] = "ecg.conv"(%arg0, %arg1)
// CHECK-NEXT:    "ecg.fused"(%[[C]]) ({
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<1x4x8x8xf32>):
// CHECK-NEXT:      "ecg.relu"
// CHECK-NEXT:      "ecg.resize"
// CHECK-NEXT:      "ecg.sigmoid"
// CHECK-NEXT:      "ecg.yield"
// CHECK-NEXT:    }) {dnnf.ir_removable = array<i1: true, true, false>, mapping = "One-to-Many"
func.func @conv_resize_sigmoid(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x16x16xf32> {
  %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = "ecg.relu"(%0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %2 = "ecg.resize"(%1) {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>, sizes = array<i64: 1, 4, 16, 16>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
  %3 = "ecg.sigmoid"(%2) : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  return %3 : tensor<1x4x16x16xf32>
}
