// conv_2d_nchw_fchw for a pinned AVX-512 CPU (x86-64-v4): the output width (60) is padded to
// whole vectors (64 = 2 x 32), the zero-padded input is materialized once, register
// tiles of 8 output channels x 32 columns step through the input channels, the 3x3
// window unrolled: nine conv_1d tiles vectorized to vector.contract per channel, the
// accumulator carried in registers through the channel loop.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --emit=mlir --stop-after=schedule | FileCheck %s

// PLAN: k{{[0-9]+}} linalg.conv_2d_nchw_fchw [1, 16, 12, 64, 8, 3, 3] conv2d {'register_tile': (8, 32), 'padded_input': True, 'unrolled': [3, 3]}

// CHECK-LABEL: func.func @main
// CHECK: linalg.copy ins(%{{.*}} : memref<1x8x12x60xf32, {{.*}}>) outs(%{{.*}} : memref<1x8x12x60xf32, strided<[7392, 924, 66, 1], offset: 67>>)
// CHECK: scf.for {{.*}} -> (tensor<1x16x12x64xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}}) -> (vector<1x8x32xf32>)
// CHECK-COUNT-9: vector.contract {{.*}} into vector<1x8x32xf32>
// CHECK-NOT: vector.contract
// CHECK: scf.yield %{{.*}} : vector<1x8x32xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 16, 12, 60] [1, 1, 1, 1] : tensor<1x16x12x64xf32> to tensor<1x16x12x60xf32>

func.func @main(%x: tensor<1x8x12x60xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x12x60xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x8x12x60xf32> to tensor<1x8x14x62xf32>
  %empty = tensor.empty() : tensor<1x16x12x60xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x12x60xf32>) -> tensor<1x16x12x60xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%xp, %w : tensor<1x8x14x62xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x12x60xf32>) -> tensor<1x16x12x60xf32>
  return %r : tensor<1x16x12x60xf32>
}
