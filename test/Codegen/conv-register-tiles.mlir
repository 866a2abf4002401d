// The direct convolution's register tile by CPU (tiles.conv_vector_tile): on AVX2
// (x86-64-v3, 16 vector registers) 6 output channels x 2 vectors of 8 where the channels
// divide by 6, else 4 x 2; on AVX-512 (x86-64-v4, 32 registers) 8 x 2 vectors of 16.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v3 --threads=1 --emit=schedules | FileCheck %s --check-prefix=AVX2
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --threads=1 --emit=schedules | FileCheck %s --check-prefix=AVX512

// AVX2: linalg.conv_2d_nchw_fchw [1, 24, 12, 64, 8, 3, 3] conv2d {'register_tile': (6, 16), {{.*}}} @channels_24
// AVX2: linalg.conv_2d_nchw_fchw [1, 16, 12, 64, 8, 3, 3] conv2d {'register_tile': (4, 16), {{.*}}} @channels_16
// AVX512: linalg.conv_2d_nchw_fchw [1, 24, 12, 64, 8, 3, 3] conv2d {'register_tile': (8, 32), {{.*}}} @channels_24
// AVX512: linalg.conv_2d_nchw_fchw [1, 16, 12, 64, 8, 3, 3] conv2d {'register_tile': (8, 32), {{.*}}} @channels_16

func.func @channels_24(%x: tensor<1x8x14x66xf32>, %w: tensor<24x8x3x3xf32>) -> tensor<1x24x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x24x12x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x24x12x64xf32>) -> tensor<1x24x12x64xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x8x14x66xf32>, tensor<24x8x3x3xf32>) outs(%init : tensor<1x24x12x64xf32>) -> tensor<1x24x12x64xf32>
  return %r : tensor<1x24x12x64xf32>
}

func.func @channels_16(%x: tensor<1x8x14x66xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x16x12x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x12x64xf32>) -> tensor<1x16x12x64xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x8x14x66xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x12x64xf32>) -> tensor<1x16x12x64xf32>
  return %r : tensor<1x16x12x64xf32>
}
