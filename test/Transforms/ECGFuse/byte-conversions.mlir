// The importer's integer convolutions (QLinearConv, and QDQ groups imported as one) read
// their bytes through a conversion: cast to i32, subtract the zero point, cast to f32.
// Where VNNI computes them from the bytes (FusionLimits.byte_contractions: a CPU with
// avx512vnni), that conversion stays out of the kernel producing the bytes, a kernel of
// its own that dnnf-int8-matmuls replaces; elsewhere it is the producer's epilogue.
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=cpu=znver4 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2

// CHECK-LABEL: func.func @requantized_conv_then_conv
// CHECK:         %[[Q:.*]] = "ecg.fused"
// CHECK:           "ecg.quantize_linear"
// CHECK-NOT:       "ecg.cast"
// CHECK:           "ecg.yield"
// CHECK-NEXT:    }) {{.*}} -> tensor<1x4x6x6xui8>
// CHECK:         %[[F:.*]] = "ecg.fused"(%[[Q]]
// CHECK:           "ecg.cast"
// CHECK:           "ecg.sub"
// CHECK:           "ecg.cast"
// CHECK:         "ecg.conv"(%[[F]]
// AVX2-LABEL: func.func @requantized_conv_then_conv
// AVX2:         %[[F:.*]] = "ecg.fused"
// AVX2:           "ecg.quantize_linear"
// AVX2:           "ecg.cast"
// AVX2:           "ecg.sub"
// AVX2:           "ecg.cast"
// AVX2:         }) {{.*}} -> tensor<1x4x6x6xf32>
// AVX2:         "ecg.conv"(%[[F]]
func.func @requantized_conv_then_conv(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x1x1xf32>, %v: tensor<5x4x1x1xf32>) -> tensor<1x5x6x6xf32> {
  %s = "ecg.constant"() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = "ecg.constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %zi = "ecg.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %c = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x6x6xf32>
  %q = "ecg.quantize_linear"(%c, %s, %z) : (tensor<1x4x6x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x6x6xui8>
  %i = "ecg.cast"(%q) {to = "i32"} : (tensor<1x4x6x6xui8>) -> tensor<1x4x6x6xi32>
  %d = "ecg.sub"(%i, %zi) : (tensor<1x4x6x6xi32>, tensor<i32>) -> tensor<1x4x6x6xi32>
  %f = "ecg.cast"(%d) {to = "f32"} : (tensor<1x4x6x6xi32>) -> tensor<1x4x6x6xf32>
  %y = "ecg.conv"(%f, %v) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<5x4x1x1xf32>) -> tensor<1x5x6x6xf32>
  return %y : tensor<1x5x6x6xf32>
}

// -----

// A cast of bytes that no contraction reads is the producer's epilogue on every CPU.
// CHECK-LABEL: func.func @bytes_cast_for_an_add
// CHECK:         "ecg.fused"
// CHECK:           "ecg.quantize_linear"
// CHECK:           "ecg.cast"
// CHECK:           "ecg.add"
// CHECK-NOT:     "ecg.fused"
// AVX2-LABEL: func.func @bytes_cast_for_an_add
// AVX2:         "ecg.fused"
// AVX2:           "ecg.quantize_linear"
// AVX2:           "ecg.cast"
// AVX2:           "ecg.add"
func.func @bytes_cast_for_an_add(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %s = "ecg.constant"() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = "ecg.constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %q = "ecg.quantize_linear"(%x, %s, %z) : (tensor<1x4x6x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x6x6xui8>
  %f = "ecg.cast"(%q) {to = "f32"} : (tensor<1x4x6x6xui8>) -> tensor<1x4x6x6xf32>
  %y = "ecg.add"(%f, %x) : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}
