// Direct convolutions whose input leaves L2 between blocks of output channels
// (tiles.conv_rows_outer): the register tiles go one output row at a time, every
// channel block of it (rows outer), where reading the whole input once per block would
// stream more than reading the filters once per row. ResNet-50's 3x3 stride-2 layers:
// 128 -> 128 from 56x56 (its two phases read 2 MiB of input, 0.6 MiB of filters) rows
// outer with AVX2's 32 blocks of 4 channels (x86-64-v3) and AVX-512's 16 blocks of 8
// (x86-64-v4); 256 -> 256 from 28x28 (0.9 MiB of input, 2.3 MiB of filters, 14 rows)
// rows outer with AVX2's 64 blocks. With AVX-512 both are flat rows of their phase
// planes (flat_conv_rows), which go column tile by column tile (812 columns, 25 tiles and
// a peeled one of 12 columns; 224, 7 tiles: the planes 1.7 and 0.9 MiB, read once per
// block, 16 and 32 blocks). The
// 3 -> 16 at 64x64's input stays in L2: blocks outer on both.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=AVX2
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=AVX512
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v3 --emit=mlir --stop-after=schedule | FileCheck %s

// AVX2: linalg.conv_2d_nchw_fchw [1, 128, 28, 32, 128, 3, 1] conv2d {'register_tile': (4, 16), 'phases': 2, 'rows_outer': True, {{.*}}} @from_56
// AVX2: linalg.conv_2d_nchw_fchw [1, 256, 14, 16, 256, 3, 1] conv2d {'register_tile': (4, 16), 'phases': 2, 'rows_outer': True, {{.*}}} @from_28
// AVX2-NOT: rows_outer
// AVX512: linalg.conv_2d_nchw_fchw [1, 128, 1, 812, 128, 1, 1] conv2d {'register_tile': (8, 32), 'phases': 6, 'rows_outer': True, 'peeled_columns': 12, {{.*}}} @from_56
// AVX512: linalg.conv_2d_nchw_fchw [1, 256, 1, 224, 256, 1, 1] conv2d {'register_tile': (8, 32), 'phases': 6, 'rows_outer': True, {{.*}}} @from_28
// AVX512-NOT: rows_outer

// The loop over the 28 output rows encloses the one over the 32 blocks of 4 channels;
// the small convolution's blocks enclose its rows.
// CHECK-LABEL: func.func @from_56
// CHECK: scf.for %{{.*}} = %c0 to %c28 step %c1
// CHECK-NOT: scf.for
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c4
// CHECK-LABEL: func.func @from_28
// CHECK-LABEL: func.func @stays
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c4
// CHECK-NOT: scf.for
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1

func.func @from_56(%x: tensor<1x128x56x56xf32>, %w: tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x128x56x56xf32> to tensor<1x128x58x58xf32>
  %empty = tensor.empty() : tensor<1x128x28x28xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%xp, %w : tensor<1x128x58x58xf32>, tensor<128x128x3x3xf32>) outs(%init : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  return %r : tensor<1x128x28x28xf32>
}

func.func @from_28(%x: tensor<1x256x28x28xf32>, %w: tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x256x28x28xf32> to tensor<1x256x30x30xf32>
  %empty = tensor.empty() : tensor<1x256x14x14xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%xp, %w : tensor<1x256x30x30xf32>, tensor<256x256x3x3xf32>) outs(%init : tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32>
  return %r : tensor<1x256x14x14xf32>
}

func.func @stays(%x: tensor<1x3x128x128xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x3x128x128xf32> to tensor<1x3x130x130xf32>
  %empty = tensor.empty() : tensor<1x16x64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%xp, %w : tensor<1x3x130x130xf32>, tensor<16x3x3x3xf32>) outs(%init : tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  return %r : tensor<1x16x64x64xf32>
}
