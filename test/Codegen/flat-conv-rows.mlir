// Stride-1 convolutions whose rows would waste columns of the register tiles, computed
// over flat rows of whole vectors (codegen/cpu/flat_conv_rows.py): the zero-padded input
// [1, C, HP, WP] (with the bottom rows the dropped columns read) viewed as one flat row
// per channel, each window row i a 1 x KW convolution of the slice at offset i * WP,
// the KH of them accumulated (register tiles shared, as a strided convolution's
// phases); the output rows, WP apart, sliced out of the flat result. On x86-64-v3
// (8 lanes, tiles of 16 columns) a 12x12 output is 176 flat columns instead of 12 rows
// of 16 (192); a 32x32 one keeps its rows (1024 columns, flat 1088).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @conv_3x3_flat(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x8x12x12xf32>, %[[W:[^:]*]]: tensor<16x8x3x3xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1x16x1x176xf32>
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 2, 1]
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0], [1], [2, 3]] : tensor<1x8x15x14xf32> into tensor<1x8x210xf32>
// CHECK:         %[[F:.*]] = tensor.expand_shape %[[C]] {{.*}} into tensor<1x8x1x210xf32>
// CHECK:         %[[X0:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 0] [1, 8, 1, 178]
// CHECK:         %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [16, 8, 1, 3]
// CHECK:         %[[Y0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X0]], %[[W0]] : tensor<1x8x1x178xf32>, tensor<16x8x1x3xf32>) outs(%[[INIT]] : tensor<1x16x1x176xf32>)
// CHECK:         %[[X1:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 14] [1, 8, 1, 178]
// CHECK:         %[[W1:.*]] = tensor.extract_slice %[[W]][0, 0, 1, 0] [16, 8, 1, 3]
// CHECK:         %[[Y1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X1]], %[[W1]] : {{.*}} outs(%[[Y0]] :
// CHECK:         %[[X2:.*]] = tensor.extract_slice %[[F]][0, 0, 0, 28] [1, 8, 1, 178]
// CHECK:         %[[W2:.*]] = tensor.extract_slice %[[W]][0, 0, 2, 0] [16, 8, 1, 3]
// CHECK:         %[[Y2:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X2]], %[[W2]] : {{.*}} outs(%[[Y1]] :
// CHECK:         %[[R:.*]] = tensor.extract_slice %[[Y2]][0, 0, 0, 0] [1, 16, 1, 168]
// CHECK:         tensor.expand_shape {{.*}} output_shape [1, 16, 12, 14]
// CHECK:         %[[Y:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 12, 12] [1, 1, 1, 1] : tensor<1x16x12x14xf32> to tensor<1x16x12x12xf32>
// CHECK:         return %[[Y]]
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 1, 176, 8, 1, 3] conv2d {'register_tile': (4, 16), 'phases': 3, {{.*}}} @conv_3x3_flat
func.func @conv_3x3_flat(%x: tensor<1x8x12x12xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x12x12xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x8x12x12xf32> to tensor<1x8x14x14xf32>
  %e = tensor.empty() : tensor<1x16x12x12xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) outs(%i : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  return %y : tensor<1x16x12x12xf32>
}


// -----

// The bias broadcast into the flat shape, the ReLU moved onto the flat rows: the
// convolution's epilogue.
// CHECK-LABEL: func.func @conv_bias_relu_flat(
// CHECK:         %[[B:.*]] = linalg.broadcast {{.*}} outs(%{{.*}} : tensor<1x16x1x176xf32>) dimensions = [0, 2, 3]
// CHECK:         %[[Y0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} outs(%[[B]] : tensor<1x16x1x176xf32>)
// CHECK:         %[[Y1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} outs(%[[Y0]] :
// CHECK:         %[[Y2:.*]] = linalg.conv_2d_nchw_fchw {{.*}} outs(%[[Y1]] :
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[Y2]] : tensor<1x16x1x176xf32>)
// CHECK:           arith.maximumf
// CHECK:         tensor.extract_slice %[[RELU]][0, 0, 0, 0] [1, 16, 1, 168]
// CHECK-NOT:     linalg.generic
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 1, 176, 8, 1, 3] conv2d {'register_tile': (4, 16), 'phases': 3, {{.*}}'epilogue': {{.*}} @conv_bias_relu_flat
func.func @conv_bias_relu_flat(%x: tensor<1x8x12x12xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x12x12xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x8x12x12xf32> to tensor<1x8x14x14xf32>
  %e = tensor.empty() : tensor<1x16x12x12xf32>
  %i = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<1x16x12x12xf32>) dimensions = [0, 2, 3]
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) outs(%i : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y : tensor<1x16x12x12xf32>) outs(%e : tensor<1x16x12x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x16x12x12xf32>
  return %r : tensor<1x16x12x12xf32>
}


// -----

// A residual varies over the image: the row schedule applies its add in the output
// tiles, so the convolution keeps its rows (the input padded to whole vectors of
// output columns).
// CHECK-LABEL: func.func @conv_residual_keeps_rows(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x12x16xf32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 12, 16, 8, 3, 3] conv2d {{.*}} @conv_residual_keeps_rows
func.func @conv_residual_keeps_rows(%x: tensor<1x8x14x14xf32>, %w: tensor<16x8x3x3xf32>, %res: tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x12x12xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) outs(%i : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %res : tensor<1x16x12x12xf32>, tensor<1x16x12x12xf32>) outs(%e : tensor<1x16x12x12xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %a = arith.addf %in, %in2 : f32
    linalg.yield %a : f32
  } -> tensor<1x16x12x12xf32>
  return %r : tensor<1x16x12x12xf32>
}


// -----

// CHECK-LABEL: func.func @conv_whole_rows_kept(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x34x34xf32>, tensor<16x8x3x3xf32>) outs(%{{.*}} : tensor<1x16x32x32xf32>)
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 32, 32, 8, 3, 3] conv2d {{.*}} @conv_whole_rows_kept
func.func @conv_whole_rows_kept(%x: tensor<1x8x32x32xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x32x32xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x8x32x32xf32> to tensor<1x8x34x34xf32>
  %e = tensor.empty() : tensor<1x16x32x32xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x8x34x34xf32>, tensor<16x8x3x3xf32>) outs(%i : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  return %y : tensor<1x16x32x32xf32>
}

// -----

// A bias read through unit dims ([F, 1, 1] at (f, 0, 0)) added by the ReLU's generic,
// as the ONNX importer writes it: moved onto the flat rows with its map, the
// convolution's epilogue. The unpadded input gets the zero row that the dropped
// columns read, a pad of its own.
// CHECK-LABEL: func.func @conv_unit_dims_bias_flat(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x8x14x14xf32>
// CHECK:         tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK-COUNT-2: linalg.conv_2d_nchw_fchw
// CHECK:         %[[Y2:.*]] = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x16x1x176xf32>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[Y2]], %{{.*}} : tensor<1x16x1x176xf32>, tensor<16x1x1xf32>)
// CHECK:         tensor.extract_slice %[[G]][0, 0, 0, 0] [1, 16, 1, 168]
// PLAN: linalg.conv_2d_nchw_fchw [1, 16, 1, 176, 8, 1, 3] conv2d {{.*}}'epilogue'{{.*}} @conv_unit_dims_bias_flat
func.func @conv_unit_dims_bias_flat(%x: tensor<1x8x14x14xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16x1x1xf32>) -> tensor<1x16x12x12xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x12x12xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) outs(%i : tensor<1x16x12x12xf32>) -> tensor<1x16x12x12xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b : tensor<1x16x12x12xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x12x12xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %a = arith.addf %in, %bias : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x16x12x12xf32>
  return %r : tensor<1x16x12x12xf32>
}
