// A horizontally strided pooling window wider than two vectors (codegen/cpu/windows.py;
// narrower ones read their taps strided; depthwise convolutions split each channel by
// phase in a loop, depthwise-channel-loops.mlir): the input, padded to a whole
// number of column pairs, is viewed as [N, C, H, W/2, 2] and transposed once into its
// two column phases [N, C, H, 2, W/2]; every tap of the window then reads one phase
// contiguously (tap kw: phase kw % 2, from column kw / 2), and the transpose's vectors
// hold whole rows [2, 57] (rows.MAX_WHOLE_TRANSPOSED_ROW: tiles of [2, 32] would leave a
// ragged last one and mask every tile).
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @max_pool_stride_2(
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 0, 1]
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 16, 113, 57, 2] : tensor<1x16x113x114xf32> into tensor<1x16x113x57x2xf32>
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<1x16x113x57x2xf32>) outs(%{{.*}} : tensor<1x16x113x2x57xf32>)
// CHECK-DAG:     tensor.extract_slice %[[T]][0, 0, 0, 0, 0] [1, 16, 56, 1, 56] [1, 1, 2, 1, 1] : tensor<1x16x113x2x57xf32> to tensor<1x16x56x56xf32>
// CHECK-DAG:     tensor.extract_slice %[[T]][0, 0, 0, 1, 0] [1, 16, 56, 1, 56] [1, 1, 2, 1, 1] : tensor<1x16x113x2x57xf32> to tensor<1x16x56x56xf32>
// CHECK-DAG:     tensor.extract_slice %[[T]][0, 0, 0, 0, 1] [1, 16, 56, 1, 56] [1, 1, 2, 1, 1] : tensor<1x16x113x2x57xf32> to tensor<1x16x56x56xf32>
// CHECK-DAG:     tensor.extract_slice %[[T]][0, 0, 2, 0, 1] [1, 16, 56, 1, 56] [1, 1, 2, 1, 1] : tensor<1x16x113x2x57xf32> to tensor<1x16x56x56xf32>
// CHECK-NOT:     linalg.pooling_nchw_max
// PLAN: linalg.generic [1, 16, 113, 2, 57] vectorized {'vector': [1, 1, 1, 2, 57]} @max_pool_stride_2
// PLAN: linalg.generic [1, 16, 56, 56] vectorized {'vector': [1, 1, 1, 32]} @max_pool_stride_2
func.func @max_pool_stride_2(%x: tensor<1x16x113x113xf32>) -> tensor<1x16x56x56xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x16x56x56xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %window : tensor<1x16x113x113xf32>, tensor<3x3xf32>) outs(%f : tensor<1x16x56x56xf32>) -> tensor<1x16x56x56xf32>
  return %y : tensor<1x16x56x56xf32>
}
