// RUN: dnnf-opt %s --split-input-file --ecg-fuse --ecg-outline-kernels --dnnf-kernel-statistics | FileCheck %s

// A fused block is one kernel: its ops in order, its argument and result shapes, the
// ECG FLOPs (matmul 2*4*8*16 = 1024, add 4*16 = 64) and the bytes it reads and
// writes, its arguments' and results' (4 * (32 + 128 + 64 + 64) = 1152).
// CHECK-LABEL: func.func private @kernel_0_mat_mul_add
// CHECK-SAME: dnnf.kernel.bytes = 1152 : i64
// CHECK-SAME: dnnf.kernel.flops = 1088 : i64
// CHECK-SAME: dnnf.kernel.ops = "mat_mul+add"
// CHECK-SAME: dnnf.kernel.shapes = "4x8xf32, 8x16xf32, 4x16xf32 -> 4x16xf32"
func.func @matmul_add(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = "ecg.mat_mul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Bytes by element type: 64 i8 in, 64 f32 out = 64 + 256.
// CHECK-LABEL: func.func private @kernel_0_cast_relu_neg
// CHECK-SAME: dnnf.kernel.bytes = 320 : i64
// CHECK-SAME: dnnf.kernel.ops = "cast+relu+neg"
// CHECK-SAME: dnnf.kernel.shapes = "64xi8 -> 64xf32"
func.func @cast_chain(%x: tensor<64xi8>) -> tensor<64xf32> {
  %0 = "ecg.cast"(%x) {to = "f32"} : (tensor<64xi8>) -> tensor<64xf32>
  %1 = "ecg.relu"(%0) : (tensor<64xf32>) -> tensor<64xf32>
  %2 = "ecg.neg"(%1) : (tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}
