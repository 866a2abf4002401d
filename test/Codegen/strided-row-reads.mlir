// Stride-2 windows on rows narrower than a vector (codegen/cpu/strided_reads.py, after
// bufferization, before the vector lowering): each tap's row, a read with an innermost
// stride of 2, is read contiguously over the span its lanes cover (11 elements for 6
// lanes, through a view of stride 1 at the same offset: nothing past the last lane) and
// its even lanes are shuffled out (the read flattened to one load: flat_transfers.py).
// A stride-1 row read is left as it is.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --stop-after=lower-vectors | FileCheck %s

// CHECK-LABEL: func.func @depthwise_13x13_stride2
// CHECK: %[[META:.*]], %[[OFFSET:.*]], %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata
// CHECK: %[[ROW:.*]] = memref.reinterpret_cast %[[META]] to offset: [%[[OFFSET]]], sizes: [1, 1, 1, 11], strides: [32448, 169, 26, 1]
// CHECK: vector.load %[[ROW]]{{.*}} : memref<1x1x1x11xf32, strided<[32448, 169, 26, 1], offset: ?>>, vector<11xf32>
// CHECK: vector.shuffle %[[FLAT:.*]], %[[FLAT]] [0, 2, 4, 6, 8, 10] : vector<11xf32>, vector<11xf32>
// CHECK-NOT: strided<[32448, 169, 26, 2]{{.*}}vector<1x1x1x6xf32>
func.func @depthwise_13x13_stride2(%x: tensor<1x192x13x13xf32>, %k: tensor<192x3x3xf32>) -> tensor<1x192x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x192x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x192x6x6xf32>) -> tensor<1x192x6x6xf32>
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %k : tensor<1x192x13x13xf32>, tensor<192x3x3xf32>) outs(%f : tensor<1x192x6x6xf32>) -> tensor<1x192x6x6xf32>
  return %y : tensor<1x192x6x6xf32>
}

// SqueezeNet's 3x3/2 max pooling on 27-wide rows: 13 lanes from a span of 25.
// CHECK-LABEL: func.func @max_pool_27x27_stride2
// CHECK: memref.reinterpret_cast {{.*}} sizes: [1, 1, 1, 25], strides: [46656, 729, 54, 1]
// CHECK: vector.shuffle %[[FLAT:.*]], %[[FLAT]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24] : vector<25xf32>, vector<25xf32>
func.func @max_pool_27x27_stride2(%x: tensor<1x64x27x27xf32>) -> tensor<1x64x13x13xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x64x13x13xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<1x64x13x13xf32>) -> tensor<1x64x13x13xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %window : tensor<1x64x27x27xf32>, tensor<3x3xf32>) outs(%f : tensor<1x64x13x13xf32>) -> tensor<1x64x13x13xf32>
  return %y : tensor<1x64x13x13xf32>
}

// Stride 1: the rows are contiguous already.
// CHECK-LABEL: func.func @max_pool_stride1
// CHECK-NOT: memref.reinterpret_cast
// CHECK-NOT: vector.shuffle
func.func @max_pool_stride1(%x: tensor<1x8x9x9xf32>) -> tensor<1x8x7x7xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %window : tensor<1x8x9x9xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  return %y : tensor<1x8x7x7xf32>
}

// A grouped 3x3/2 convolution's taps (grouped.py): rows of 16 lanes, a power of two, are
// read as two whole registers, the 32nd lane masked off (a transfer past the 31-element
// view, not read), and shuffled: one vpermt2ps where a vector of 31 floats is split by
// LLVM into pieces of 16, 8, 4, 2 and 1 lanes gathered by inserts.
// CHECK-LABEL: func.func @grouped_3x3_stride2
// CHECK: %[[ROW:.*]] = memref.reinterpret_cast {{.*}} sizes: [31], strides: [1]
// CHECK: %[[READ:.*]] = vector.transfer_read %[[ROW]][%c0], %{{.*}} : memref<31xf32, strided<[1], offset: ?>>, vector<32xf32>
// CHECK: vector.shuffle %[[READ]], %[[READ]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
func.func @grouped_3x3_stride2(%x: tensor<1x2x2x5x20xf32>, %w: tensor<2x3x2x3x3xf32>) -> tensor<1x2x3x2x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x2x9xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x2x9xf32>) -> tensor<1x2x3x2x9xf32>
  %conv = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
          ins(%x, %w : tensor<1x2x2x5x20xf32>, tensor<2x3x2x3x3xf32>) outs(%init : tensor<1x2x3x2x9xf32>) -> tensor<1x2x3x2x9xf32>
  return %conv : tensor<1x2x3x2x9xf32>
}
