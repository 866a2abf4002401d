// Convolution epilogues (codegen/cpu/epilogues.py): the bias and ReLU after a
// convolution are applied to its accumulator in registers, before the single store.
// A 3x3 convolution of width 30 is computed 32 wide (whole vectors), so its consumer is
// widened too and the slice moves after it; a 1x1 convolution is a matmul over
// [F, OH*OW], so its consumer (bias, residual add, ReLU) is collapsed to that shape; so
// is a 3x3 convolution whose output rows (4 wide) are narrower than a vector, over its
// patches gathered into [C*3*3, OH*OW] (im2col).
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=schedule | FileCheck %s
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=prepare | FileCheck %s --check-prefix=PREP

// CHECK-LABEL: func.func @conv3x3_bias_relu
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[ACC:.*]] = scf.for {{.*}} -> (vector<1x8x32xf32>)
// CHECK:               vector.contract
// CHECK:             %[[TILE:.*]] = vector.shape_cast %[[ACC]] : vector<1x8x32xf32> to vector<1x8x1x32xf32>
// CHECK-NEXT:        %[[BIASED:.*]] = arith.addf %[[TILE]], %{{.*}} : vector<1x8x1x32xf32>
// CHECK-NEXT:        %[[RELU:.*]] = arith.maximumf %[[BIASED]], %{{.*}} : vector<1x8x1x32xf32>
// CHECK-NEXT:        vector.transfer_write %[[RELU]]
// CHECK-NOT:     linalg.generic
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 32, 14, 30] [1, 1, 1, 1] : tensor<1x32x14x32xf32> to tensor<1x32x14x30xf32>
func.func @conv3x3_bias_relu(%x: tensor<1x16x14x30xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x14x30xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x14x30xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x14x30xf32>
  %z = "ecg.relu"(%y) : (tensor<1x32x14x30xf32>) -> tensor<1x32x14x30xf32>
  return %z : tensor<1x32x14x30xf32>
}

// CHECK-LABEL: func.func @conv1x1_bias_add_relu
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} -> (vector<8x32xf32>)
// CHECK:         %[[BIAS:.*]] = vector.transfer_read {{.*}} : tensor<8xf32>, vector<8x32xf32>
// CHECK:         %[[RES:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK:         %[[SUM:.*]] = arith.addf %[[ACC]], %[[BIAS]] : vector<8x32xf32>
// CHECK-NEXT:    %[[SUM2:.*]] = arith.addf %[[SUM]], %[[RES]] : vector<8x32xf32>
// CHECK-NEXT:    arith.maximumf %[[SUM2]], %{{.*}} : vector<8x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]] output_shape [1, 64, 8, 8]

// PLAN: linalg.conv_2d_nchw_fchw [1, 32, 14, 32, 16, 3, 3] conv2d {{.*}}'epilogue': 'k{{[0-9]+}}'{{.*}} @conv3x3_bias_relu
// PLAN: linalg.matmul [64, 64, 32] matmul {{.*}}'epilogue': 'k{{[0-9]+}}'{{.*}} @conv1x1_bias_add_relu
// PLAN-NOT: linalg.generic
func.func @conv1x1_bias_add_relu(%x: tensor<1x32x8x8xf32>, %w: tensor<64x32x1x1xf32>, %b: tensor<64xf32>, %r: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x8x8xf32>, tensor<64x32x1x1xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  %a = "ecg.add"(%y, %r) : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %z = "ecg.relu"(%a) : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %z : tensor<1x64x8x8xf32>
}

// PREP-DAG: #[[PATCH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d0, d3 * 2 + d1, d4 * 2 + d2)>
// PREP-LABEL: func.func @conv3x3_narrow_bias_relu
// PREP:         %[[X:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// PREP:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[PATCH]], #{{.*}}]{{.*}} ins(%[[X]] : tensor<1x32x8x10xf32>) outs(%{{.*}} : tensor<32x3x3x3x4xf32>)
// PREP:         %[[PM:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1, 2], [3, 4]] : tensor<32x3x3x3x4xf32> into tensor<288x12xf32>
// PREP:         %[[WM:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<48x32x3x3xf32> into tensor<48x288xf32>
// PREP:         linalg.matmul ins(%[[WM]], %[[PM]] : tensor<48x288xf32>, tensor<288x12xf32>)
// PREP-NOT:     linalg.conv_2d
// PLAN: linalg.generic [32, 3, 3, 3, 4] vectorized {{.*}} @conv3x3_narrow_bias_relu
// PLAN-NEXT: linalg.matmul [48, 12, 288] matmul {{.*}}'epilogue': 'k{{[0-9]+}}'{{.*}} @conv3x3_narrow_bias_relu
// PLAN-NOT: linalg.generic
func.func @conv3x3_narrow_bias_relu(%x: tensor<1x32x6x8xf32>, %w: tensor<48x32x3x3xf32>, %b: tensor<48xf32>) -> tensor<1x48x3x4xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x32x6x8xf32>, tensor<48x32x3x3xf32>, tensor<48xf32>) -> tensor<1x48x3x4xf32>
  %z = "ecg.relu"(%y) : (tensor<1x48x3x4xf32>) -> tensor<1x48x3x4xf32>
  return %z : tensor<1x48x3x4xf32>
}
