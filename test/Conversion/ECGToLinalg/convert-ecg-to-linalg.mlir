// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR is valid upstream IR: it survives canonicalization and bufferization.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

// CHECK-LABEL: func.func @constant
// CHECK: %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<2x3xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[C]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: arith.addf
func.func @constant(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "ecg.constant"() {value = dense<5.000000e-01> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = "ecg.add"(%arg0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @unary(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "ecg.relu"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "ecg.erf"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "ecg.tanh"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cast_clip
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi64>)
// CHECK: arith.fptosi %{{.*}} : f32 to i64
func.func @cast_clip(%arg0: tensor<2x3xf32>) -> tensor<2x3xi64> {
  %0 = "ecg.clip"(%arg0) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "ecg.cast"(%0) {to = "i64"} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  return %1 : tensor<2x3xi64>
}

// -----

// numpy broadcasting is in the indexing maps.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @binary_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK: math.powf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK: arith.divf
func.func @binary_broadcast(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "ecg.pow"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "ecg.div"(%0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @compare_where
// CHECK: arith.cmpf olt
// CHECK: arith.xori
// CHECK: arith.andi
// CHECK: arith.select
func.func @compare_where(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2x3xi1>) -> tensor<2x3xf32> {
  %0 = "ecg.less"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = "ecg.not"(%arg2) : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %2 = "ecg.and"(%0, %1) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %3 = "ecg.where"(%2, %arg0, %arg1) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_normalization
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CHANNEL]], #[[CHANNEL]], #[[CHANNEL]], #[[CHANNEL]], #{{.*}}]
// CHECK: math.sqrt
func.func @batch_normalization(%arg0: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "ecg.batch_normalization"(%arg0, %s, %b, %m, %v) {epsilon = 1.000000e-05 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Padding, then the convolution into zeros, then the bias added per channel (an
// element-wise epilogue the code generator fuses into the convolution).
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @conv_bias_pads
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %arg1 : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[ZEROS]] : tensor<1x4x4x4xf32>)
// CHECK: %[[BIAS:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1, 2]] output_shape [4, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CHANNEL]], #{{.*}}], {{.*}} ins(%[[CONV]], %[[BIAS]] : tensor<1x4x4x4xf32>, tensor<4x1x1xf32>)
// CHECK: arith.addf
func.func @conv_bias_pads(%arg0: tensor<1x3x8x8xf32>, %arg1: tensor<4x3x3x3xf32>, %arg2: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "ecg.conv"(%arg0, %arg1, %arg2) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_grouped
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 6, 6]
// CHECK: %[[W:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK: %[[Y:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[X]], %[[W]] : tensor<1x2x2x6x6xf32>, tensor<2x3x2x3x3xf32>) outs(%{{.*}} : tensor<1x2x3x4x4xf32>)
// CHECK: tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x4x4xf32> into tensor<1x6x4x4xf32>
func.func @conv_grouped(%arg0: tensor<1x4x6x6xf32>, %arg1: tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32> {
  %0 = "ecg.conv"(%arg0, %arg1) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 2 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_depthwise
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%{{.*}}, %[[W]] : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>)
func.func @conv_depthwise(%arg0: tensor<1x4x6x6xf32>, %arg1: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "ecg.conv"(%arg0, %arg1) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 4 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// B^T is an indexing map of linalg.matmul; C is the broadcast accumulator.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gemm
// CHECK: %[[INIT:.*]] = linalg.broadcast ins(%arg2 : tensor<3xf32>) outs(%{{.*}} : tensor<2x3xf32>) dimensions = [0]
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%arg0, %arg1 : tensor<2x5xf32>, tensor<3x5xf32>) outs(%[[INIT]] : tensor<2x3xf32>)
func.func @gemm(%arg0: tensor<2x5xf32>, %arg1: tensor<3x5xf32>, %arg2: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "ecg.gemm"(%arg0, %arg1, %arg2) {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, transA = 0 : i64, transB = 1 : i64} : (tensor<2x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A batched lhs times a matrix: the lhs rows fold into one matmul.
// CHECK-LABEL: func.func @mat_mul
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x7x5xf32> into tensor<14x5xf32>
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[A]], %arg1 : tensor<14x5xf32>, tensor<5x3xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 7, 3]
func.func @mat_mul(%arg0: tensor<2x7x5xf32>, %arg1: tensor<5x3xf32>) -> tensor<2x7x3xf32> {
  %0 = "ecg.mat_mul"(%arg0, %arg1) : (tensor<2x7x5xf32>, tensor<5x3xf32>) -> tensor<2x7x3xf32>
  return %0 : tensor<2x7x3xf32>
}

// -----

// CHECK-LABEL: func.func @batch_mat_mul
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x6xf32> into tensor<6x5x6xf32>
// CHECK: %[[Y:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<6x4x5xf32>, tensor<6x5x6xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 4, 6]
func.func @batch_mat_mul(%arg0: tensor<2x3x4x5xf32>, %arg1: tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = "ecg.mat_mul"(%arg0, %arg1) : (tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// Batch dimensions that broadcast are materialized first.
// CHECK-LABEL: func.func @broadcast_mat_mul
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3]] : tensor<2x1x4x5xf32> into tensor<2x4x5xf32>
// CHECK: linalg.broadcast ins(%[[A]] : tensor<2x4x5xf32>) outs(%{{.*}} : tensor<2x3x4x5xf32>) dimensions = [1]
// CHECK: linalg.broadcast ins(%arg1 : tensor<3x5x6xf32>) outs(%{{.*}} : tensor<2x3x5x6xf32>) dimensions = [0]
// CHECK: linalg.batch_matmul {{.*}} -> tensor<6x4x6xf32>
func.func @broadcast_mat_mul(%arg0: tensor<2x1x4x5xf32>, %arg1: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = "ecg.mat_mul"(%arg0, %arg1) : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: %[[LOW:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[LOW]] : f32)
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %[[WINDOW]] : tensor<1x2x10x10xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x4x4xf32>)
func.func @max_pool(%arg0: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "ecg.max_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, storage_order = 0 : i64, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Padding excluded from the count: the divisor is a constant per output position.
// CHECK-LABEL: func.func @average_pool
// CHECK: linalg.pooling_nchw_sum {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 6.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @average_pool(%arg0: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "ecg.average_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A window far past its input (EfficientNet's pooler: AvgPool2d(1280, ceil_mode=True) on
// 3x3) reads only its first 3x3 taps: no padding to the window's size, a 3x3 window,
// divided by the 9 positions counted.
// CHECK-LABEL: func.func @average_pool_window_past_input
// CHECK-NOT: tensor.pad
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: linalg.pooling_nchw_sum {{.*}} ins(%arg0, %[[WINDOW]] : tensor<1x2x3x3xf32>, tensor<3x3xf32>)
// CHECK: arith.constant 9.000000e+00 : f32
func.func @average_pool_window_past_input(%arg0: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %0 = "ecg.average_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 1 : i64, count_include_pad = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1280, 1280>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1280, 1280>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @global_average_pool
// CHECK: %[[SUM:.*]] = linalg.reduce {{.*}}ins(%arg0 : tensor<1x2x4x4xf32>) outs(%{{.*}} : tensor<1x2xf32>) dimensions = [2, 3]
// CHECK: arith.constant 1.600000e+01 : f32
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2, 3]] output_shape [1, 2, 1, 1]
func.func @global_average_pool(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  %0 = "ecg.global_average_pool"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

// The channel window is a reduction dimension of a generic over the padded squares.
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
// CHECK-LABEL: func.func @lrn
// CHECK: tensor.pad %{{.*}} low[0, 1, 0, 0] high[0, 1, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: math.powf
func.func @lrn(%arg0: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = "ecg.lrn"(%arg0) {alpha = 1.000000e-04 : f64, beta = 7.500000e-01 : f64, bias = 1.000000e+00 : f64, size = 3 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%arg0 : tensor<2x5xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: linalg.reduce {{.*}}ins(%{{.*}} : tensor<2x5xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<arcp> : f32
func.func @softmax(%arg0: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "ecg.softmax"(%arg0) {axis = -1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func.func @layer_normalization
// CHECK: linalg.reduce {{.*}}ins(%arg0 : tensor<2x8xf32>) outs(%{{.*}} : tensor<2xf32>) dimensions = [1]
// CHECK: arith.subf
// CHECK: linalg.reduce
// CHECK: math.sqrt
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @layer_normalization(%arg0: tensor<2x8xf32>, %scale: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = "ecg.layer_normalization"(%arg0, %scale, %bias) {axis = -1 : i64, epsilon = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK: linalg.reduce {{.*}}ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x3xf32>) dimensions = [2]
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK: %[[MEAN:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [2, 3, 1]
// CHECK: %[[SUM:.*]] = linalg.reduce {{.*}}ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3xf32>) dimensions = [0, 2]
// CHECK: return %[[MEAN]], %[[SUM]]
func.func @reductions(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<3xf32>) {
  %0 = "ecg.reduce_mean"(%arg0) {axes = array<i64: 2>, keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %1 = "ecg.reduce_sum"(%arg0) {axes = array<i64: 0, 2>, keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<2x3x1xf32>, tensor<3xf32>
}

// -----

// Reshapes are collapse_shape to the finest common shape, then expand_shape.
// CHECK-LABEL: func.func @reshapes
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[B:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1], [2]] output_shape [1, 6, 4] : tensor<6x4xf32> into tensor<1x6x4xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0], [1, 2]] : tensor<1x6x4xf32> into tensor<1x24xf32>
// CHECK: %[[D:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1]] : tensor<1x24xf32> into tensor<24xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[D]] {{\[}}[0, 1]] output_shape [1, 24] : tensor<24xf32> into tensor<1x24xf32>
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0, 1]] : tensor<1x24xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
func.func @reshapes(%arg0: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = "ecg.reshape"(%arg0) {shape = array<i64: 1, 6, 4>} : (tensor<2x3x4xf32>) -> tensor<1x6x4xf32>
  %1 = "ecg.flatten"(%0) {axis = 1 : i64} : (tensor<1x6x4xf32>) -> tensor<1x24xf32>
  %2 = "ecg.squeeze"(%1) {axes = array<i64: 0>} : (tensor<1x24xf32>) -> tensor<24xf32>
  %3 = "ecg.unsqueeze"(%2) {axes = array<i64: 0>} : (tensor<24xf32>) -> tensor<1x24xf32>
  %4 = "ecg.reshape"(%3) {shape = array<i64: 4, 6>} : (tensor<1x24xf32>) -> tensor<4x6xf32>
  return %4 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x4x3xf32>) permutation = [0, 2, 1]
func.func @transpose(%arg0: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  %0 = "ecg.transpose"(%arg0) {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_split
// CHECK: %[[CAT:.*]] = tensor.concat dim(1) %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: tensor.extract_slice %[[CAT]][0, 0] [2, 4] [1, 1]
// CHECK: tensor.extract_slice %[[CAT]][0, 4] [2, 4] [1, 1]
func.func @concat_split(%arg0: tensor<2x3xf32>, %arg1: tensor<2x5xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "ecg.concat"(%arg0, %arg1) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1:2 = "ecg.split"(%0) {axis = 1 : i64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, split = array<i64: 4, 4>} : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %1#0, %1#1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Positive steps: extract_slice; a negative step reads start + step * i.
// CHECK-DAG: #[[REVERSED:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 5)>
// CHECK-LABEL: func.func @slice
// CHECK: tensor.extract_slice %arg0[1, 0] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[REVERSED]], #{{.*}}]
func.func @slice(%arg0: tensor<4x6xf32>) -> (tensor<2x3xf32>, tensor<4x6xf32>) {
  %0 = "ecg.slice"(%arg0) {axes = array<i64: 0, 1>, ends = array<i64: 3, 6>, starts = array<i64: 1, 0>, steps = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %1 = "ecg.slice"(%arg0) {axes = array<i64: 1>, ends = array<i64: -1>, starts = array<i64: 5>, steps = array<i64: -1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x6xf32>
}

// -----

// One index kept along an axis: step 1 there, whatever the step (a strided one-element
// view read as a broadcast has no vector lowering); a negative step then needs no generic.
// CHECK-LABEL: func.func @slice_one_element
// CHECK: tensor.extract_slice %arg0[32] [1] [1] : tensor<33xf32> to tensor<1xf32>
// CHECK: tensor.extract_slice %arg0[5] [1] [1] : tensor<33xf32> to tensor<1xf32>
// CHECK-NOT: linalg.generic
func.func @slice_one_element(%arg0: tensor<33xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %0 = "ecg.slice"(%arg0) {axes = array<i64: 0>, ends = array<i64: 33>, starts = array<i64: 32>, steps = array<i64: 3>} : (tensor<33xf32>) -> tensor<1xf32>
  %1 = "ecg.slice"(%arg0) {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 5>, steps = array<i64: -2>} : (tensor<33xf32>) -> tensor<1xf32>
  return %0, %1 : tensor<1xf32>, tensor<1xf32>
}

// -----

// An edge pad of a strided slice in one kernel gathers from the slice's source at
// start + step * i on every axis the slice cuts: also on the one-index axis, whose
// step is 1 but whose start (1) is not 0 (it was read at 0).
// CHECK-LABEL: func.func @edge_pad_of_a_strided_slice
// CHECK: linalg.generic
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK: %[[STRIDED:.*]] = arith.muli %[[ROW]], %c2
// CHECK: %[[SOURCE_ROW:.*]] = arith.addi %c0{{.*}}, %[[STRIDED]] : index
// CHECK: %[[ONE:.*]] = arith.addi %c1{{.*}}, %{{.*}} : index
// CHECK: tensor.extract %arg0[%{{.*}}, %[[SOURCE_ROW]], %[[ONE]]] : tensor<1x8x2xf32>
func.func @edge_pad_of_a_strided_slice(%arg0: tensor<1x8x2xf32>) -> tensor<1x6x1xf32> {
  %0 = "ecg.fused"(%arg0) ({
  ^bb0(%x: tensor<1x8x2xf32>):
    %1 = "ecg.slice"(%x) {axes = array<i64: 1, 2>, ends = array<i64: 8, 2>, starts = array<i64: 0, 1>, steps = array<i64: 2, 1>} : (tensor<1x8x2xf32>) -> tensor<1x4x1xf32>
    %2 = "ecg.pad"(%1) {constant_value = 0.000000e+00 : f64, mode = "edge", pads = array<i64: 0, 2, 0, 0, 0, 0>} : (tensor<1x4x1xf32>) -> tensor<1x6x1xf32>
    "ecg.yield"(%2) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x6x1xf32>) -> ()
  }) {mapping = "Reorganize", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x8x2xf32>) -> tensor<1x6x1xf32>
  return %0 : tensor<1x6x1xf32>
}

// -----

// An embedding lookup: a generic over the output extracts the indexed rows; a negative
// index wraps, and the row is clamped to [0, 9], so that no index reads out of bounds
// (run-time indices are checked before the code runs). The read is 1-d, from the
// table's flat view at row * 3 + column in index: a vector load of the row.
// CHECK-LABEL: func.func @gather
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<10x3xf32> into tensor<30xf32>
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<1x4xi64>) outs(%{{.*}} : tensor<1x4x3xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[COL:.*]] = linalg.index 2 : index
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[WRAPPED:.*]] = arith.select
// CHECK: %[[LOW:.*]] = arith.maxsi %[[WRAPPED]], %{{.*}} : index
// CHECK: %[[CLAMPED:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK: %[[START:.*]] = arith.muli %[[CLAMPED]], %c3{{.*}} : index
// CHECK: %[[AT:.*]] = arith.addi %[[START]], %[[COL]] : index
// CHECK: tensor.extract %[[FLAT]][%[[AT]]] : tensor<30xf32>
func.func @gather(%arg0: tensor<10x3xf32>, %arg1: tensor<1x4xi64>) -> tensor<1x4x3xf32> {
  %0 = "ecg.gather"(%arg0, %arg1) {axis = 0 : i64} : (tensor<10x3xf32>, tensor<1x4xi64>) -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @expand
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: linalg.broadcast ins(%[[X]] : tensor<3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) dimensions = [0, 2]
func.func @expand(%arg0: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = "ecg.expand"(%arg0) {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Constant padding is tensor.pad; edge (and reflect, wrap) read a computed index.
// CHECK-LABEL: func.func @pad
// CHECK: tensor.pad %arg0 low[0, 1] high[1, 2]
// CHECK: arith.constant 1.500000e+00 : f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0
func.func @pad(%arg0: tensor<2x3xf32>) -> (tensor<3x6xf32>, tensor<4x5xf32>) {
  %0 = "ecg.pad"(%arg0) {constant_value = 1.500000e+00 : f64, mode = "constant", pads = array<i64: 0, 1, 1, 2>} : (tensor<2x3xf32>) -> tensor<3x6xf32>
  %1 = "ecg.pad"(%arg0) {constant_value = 0.000000e+00 : f64, mode = "edge", pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return %0, %1 : tensor<3x6xf32>, tensor<4x5xf32>
}

// -----

// Reflect mirrors the index as max(p, -p) with p = i - low (SPIR-V lowers no math.absi on
// index), and reflects positions past the end around size - 1: 2 * (4 - 1) - p.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6xf32>)
// CHECK: %[[P:.*]] = arith.subi %{{.*}}, %c1
// CHECK: %[[N:.*]] = arith.subi %c0{{.*}}, %[[P]]
// CHECK: %[[A:.*]] = arith.maxsi %[[P]], %[[N]]
// CHECK: arith.cmpi sge, %[[A]], %c4
// CHECK: arith.subi %c6{{.*}}, %[[A]]
// CHECK: tensor.extract %arg0
func.func @pad_reflect(%arg0: tensor<4xf32>) -> tensor<6xf32> {
  %0 = "ecg.pad"(%arg0) {constant_value = 0.000000e+00 : f64, mode = "reflect", pads = array<i64: 1, 1>} : (tensor<4xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// A fusion block is inlined: its body ops are lowered in its place.
// CHECK-LABEL: func.func @fused
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.negf
func.func @fused(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ecg.fused"(%a, %b) ({
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = "ecg.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %r = "ecg.relu"(%s) : (tensor<4xf32>) -> tensor<4xf32>
    "ecg.yield"(%r) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {mapping = "One-to-One", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ecg.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
