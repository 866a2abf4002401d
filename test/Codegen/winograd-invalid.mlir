// dnnf-winograd=mode=strict names the convolution it cannot rewrite; an unknown mode is
// an error at the module.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-winograd=mode=strict
// RUN: not dnnf-opt %s --dnnf-winograd=mode=fast 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: dnnf-winograd: mode 'fast' is not one of auto, always, strict

// Filters computed at run time cannot be transformed at compile time.
func.func @runtime_filters(%x: tensor<1x3x10x10xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  // expected-error@below {{dnnf-winograd: linalg.conv_2d_nchw_fchw (1x3x10x10 input, 4x3x3x3 filters): its filters are not a constant at compile time}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A stride of 2 is not what F(4x4, 3x3) computes.
func.func @strided(%x: tensor<1x3x10x10xf32>) -> tensor<1x4x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<4x3x3x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  // expected-error@below {{dnnf-winograd: linalg.conv_2d_nchw_fchw is not a 3x3, stride-1, dilation-1 f32 convolution with static shapes}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}
