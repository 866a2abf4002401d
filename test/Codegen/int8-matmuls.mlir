// dnnf-int8-matmuls (codegen/cpu/int8_matmuls.py): on a CPU with avx512vnni, a 2-D f32
// linalg.matmul (accumulator: a fill of zero) whose A every call passes from a kernel
// computing float(b - offset) of bytes b, and whose B is a constant of integers in
// -128 ... 127, computes from the bytes with vpdpbusd (a call of the LLVM intrinsic);
// B is packed at compile time as [ceil(K / 4) + 1, N rounded up to 16] i32 words, the
// last row -offset * B's column sums; A's last word (K = 6: no multiple of 4) is read
// bounded. Without avx512vnni (x86-64-v3), or when the conversion is no byte offset,
// nothing changes.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-int8-matmuls{cpu=znver4})" | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-int8-matmuls{cpu=x86-64-v3})" | FileCheck %s --check-prefix=AVX2
// RUN: not dnnf-opt %s --split-input-file --pass-pipeline="builtin.module(dnnf-int8-matmuls{target=vulkan})" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: dnnf-int8-matmuls: target 'vulkan' is not a CPU

// CHECK:         func.func private @llvm.x86.avx512.vpdpbusd.512(vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-LABEL: func.func @entry(
// CHECK-SAME:      %[[A:[a-z0-9_]+]]: tensor<5x6xi8>
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[\[}}-167312383, 185075198, 201980419, 0, {{.*}}[-45, 315, -441, 0, {{.*}} : tensor<3x16xi32>
// CHECK:         %[[Y:.*]] = call @product(%[[A]], %[[W]]) : (tensor<5x6xi8>, tensor<3x16xi32>) -> tensor<5x3xf32>
// CHECK:         return %[[Y]]
// CHECK-NOT:   @convert
// CHECK-LABEL: func.func private @product(
// CHECK-SAME:      %[[BYTES:[a-z0-9_]+]]: tensor<5x6xi8>, %[[PACKED:[a-z0-9_]+]]: tensor<3x16xi32>
// CHECK:         scf.forall (%{{.*}}) in (1)
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:               vector.transfer_read %[[BYTES]]{{.*}} {in_bounds = [true]} : tensor<5x6xi8>, vector<4xi8>
// CHECK:               func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK:             vector.transfer_read %[[BYTES]]{{.*}} : tensor<5x6xi8>, vector<4xi8>
// CHECK:           tensor.parallel_insert_slice {{.*}} [4, 16] [1, 1] : tensor<4x16xi32> into tensor<5x16xi32>
// CHECK:         scf.forall (%{{.*}}) in (1)
// CHECK:           scf.for {{.*}} -> (vector<16xi32>)
// CHECK:           tensor.parallel_insert_slice {{.*}} [1, 16] [1, 1] : tensor<1x16xi32> into tensor<5x16xi32>
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0, 0] [5, 3] [1, 1] : tensor<5x16xi32> to tensor<5x3xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[SLICE]] : tensor<5x3xi32>)
// CHECK:           arith.sitofp
// AVX2-LABEL:  func.func @entry(
// AVX2:          call @convert
// AVX2-LABEL:  func.func private @product(
// AVX2:          linalg.matmul
#map = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @entry(%a: tensor<5x6xi8>) -> tensor<5x3xf32> {
  %x = call @convert(%a) : (tensor<5x6xi8>) -> tensor<5x6xf32>
  %w = arith.constant dense<[[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, 11.0, 12.0], [13.0, -128.0, 127.0], [0.0, 1.0, 2.0]]> : tensor<6x3xf32>
  %y = call @product(%x, %w) : (tensor<5x6xf32>, tensor<6x3xf32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
func.func private @convert(%x: tensor<5x6xi8>) -> tensor<5x6xf32> {
  %c = arith.constant dense<3> : tensor<i32>
  %e = tensor.empty() : tensor<5x6xf32>
  %r = linalg.generic {indexing_maps = [#map, #scalar, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<5x6xi8>, tensor<i32>) outs(%e : tensor<5x6xf32>) {
  ^bb0(%in: i8, %k: i32, %out: f32):
    %w = arith.extui %in : i8 to i32
    %s = arith.subi %w, %k : i32
    %f = arith.sitofp %s : i32 to f32
    linalg.yield %f : f32
  } -> tensor<5x6xf32>
  return %r : tensor<5x6xf32>
}
func.func private @product(%x: tensor<5x6xf32>, %w: tensor<6x3xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<5x6xf32>, tensor<6x3xf32>) outs(%init : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}

// -----

// A conversion that scales the bytes (b * 2): no byte offset, the f32 matmul stays.
// CHECK-LABEL: func.func @scaled(
// CHECK:         call @scale
// CHECK-LABEL: func.func private @scaled_product(
// CHECK:         linalg.matmul
// CHECK-NOT:     func.call @llvm.x86.avx512.vpdpbusd.512
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @scaled(%a: tensor<4x8xi8>) -> tensor<4x2xf32> {
  %x = call @scale(%a) : (tensor<4x8xi8>) -> tensor<4x8xf32>
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<8x2xf32>
  %y = call @scaled_product(%x, %w) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
func.func private @scale(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xi8>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: i8, %out: f32):
    %f = arith.uitofp %in : i8 to f32
    %g = arith.addf %f, %f : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func private @scaled_product(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// The conversion read by another kernel too: the matmul's kernel gets the bytes, the
// other one still the floats, and the conversion stays.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME:      %[[A:[a-z0-9_]+]]: tensor<4x8xi8>
// CHECK-DAG:     %[[X:.*]] = call @shared_convert(%[[A]])
// CHECK-DAG:     %[[W:.*]] = arith.constant {{.*}} : tensor<3x16xi32>
// CHECK:         call @shared_product(%[[A]], %[[W]]) : (tensor<4x8xi8>, tensor<3x16xi32>) -> tensor<4x2xf32>
// CHECK:         call @shared_negate(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-LABEL: func.func private @shared_convert(
// CHECK-LABEL: func.func private @shared_product(
// CHECK:         func.call @llvm.x86.avx512.vpdpbusd.512
// AVX2-LABEL:  func.func @shared(
// AVX2:          call @shared_product(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared(%a: tensor<4x8xi8>) -> (tensor<4x2xf32>, tensor<4x8xf32>) {
  %x = call @shared_convert(%a) : (tensor<4x8xi8>) -> tensor<4x8xf32>
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<8x2xf32>
  %y = call @shared_product(%x, %w) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %z = call @shared_negate(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %z : tensor<4x2xf32>, tensor<4x8xf32>
}
func.func private @shared_convert(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xi8>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: i8, %out: f32):
    %f = arith.sitofp %in : i8 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func private @shared_product(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
func.func private @shared_negate(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// An integer matmul (CumSum's, accumulating from an i32 zero) is no f32 matmul: left alone.
// CHECK-LABEL: func.func @integer_matmul(
// CHECK:         linalg.matmul
// CHECK-NOT:     func.call @llvm.x86.avx512.vpdpbusd.512
func.func @integer_matmul(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<4x4xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<4x4xi32>) -> tensor<4x4xi32>
  %c = linalg.matmul ins(%a, %b : tensor<4x4xi32>, tensor<4x4xi32>) outs(%init : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %c : tensor<4x4xi32>
}

// -----

// A convolution of the converted bytes (pad 1, stride 2; 5 channels: words straddle the
// taps) is a matmul of its windows: the bytes padded with the offset's byte (3, whose
// conversion is the f32 zero), made NHWC, each output pixel's window one row of
// 3 * 3 * 5 = 45 bytes (copied by the threads' rows of pixels), the filters packed as
// [ceil(45 / 4) + 1, 16] words, the product written transposed ([channels, pixels]: a
// transpose in registers) and read back as NCHW floats.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:      %[[A:[a-z0-9_]+]]: tensor<1x5x6x6xi8>
// CHECK:         %[[W:.*]] = arith.constant {{.*}} : tensor<13x16xi32>
// CHECK:         call @conv_product(%[[A]], %[[W]]) : (tensor<1x5x6x6xi8>, tensor<13x16xi32>) -> tensor<1x2x3x3xf32>
// CHECK-LABEL: func.func private @conv_product(
// CHECK-SAME:      %[[BYTES:[a-z0-9_]+]]: tensor<1x5x6x6xi8>, %[[PACKED:[a-z0-9_]+]]: tensor<13x16xi32>
// CHECK:         %[[NHWC:.*]] = linalg.generic {{.*}} ins(%[[BYTES]] : tensor<1x5x6x6xi8>) outs(%{{.*}} : tensor<1x6x6x5xi8>)
// CHECK:         %[[THREE:.*]] = arith.constant 3 : i8
// CHECK:         %[[PADDED:.*]] = tensor.pad %[[NHWC]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:           tensor.yield %[[THREE]] : i8
// CHECK:         scf.forall (%{{.*}}) in (3) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<9x45xi8>)
// CHECK:           scf.for
// CHECK:             vector.transfer_read %[[PADDED]]{{.*}} : tensor<1x8x8x5xi8>, vector<5xi8>
// CHECK:           tensor.parallel_insert_slice {{.*}} [3, 45] [1, 1] : tensor<3x45xi8> into tensor<9x45xi8>
// CHECK:         scf.forall (%{{.*}}) in (2)
// CHECK:           func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK:           vector.transpose {{.*}} [1, 0] : vector<4x16xi32> to vector<16x4xi32>
// CHECK:           tensor.parallel_insert_slice {{.*}} [16, 4] [1, 1] : tensor<16x4xi32> into tensor<16x9xi32>
// CHECK:         scf.forall (%{{.*}}) in (1)
// CHECK:           vector.transpose {{.*}} [1, 0] : vector<1x16xi32> to vector<16x1xi32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 9] [1, 1] : tensor<16x9xi32> to tensor<2x9xi32>
// CHECK:         %[[PLANES:.*]] = tensor.expand_shape %[[SLICE]] {{\[\[}}0], [1, 2, 3]] output_shape [2, 1, 3, 3]
// CHECK:         linalg.generic {{.*}} ins(%[[PLANES]] : tensor<2x1x3x3xi32>) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK:           arith.sitofp
// AVX2-LABEL:  func.func @conv(
// AVX2:          call @conv_convert
// AVX2-LABEL:  func.func private @conv_product(
// AVX2:          linalg.conv_2d_nchw_fchw
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
func.func @conv(%a: tensor<1x5x6x6xi8>) -> tensor<1x2x3x3xf32> {
  %x = call @conv_convert(%a) : (tensor<1x5x6x6xi8>) -> tensor<1x5x6x6xf32>
  %w = arith.constant dense<[[[[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [7.0, 8.0, 9.0]], [[-10.0, 11.0, 12.0], [13.0, -128.0, 127.0], [0.0, 1.0, 2.0]], [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [7.0, 8.0, 9.0]], [[-10.0, 11.0, 12.0], [13.0, -128.0, 127.0], [0.0, 1.0, 2.0]], [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]], [[[1.0, 0.0, 3.0], [4.0, 5.0, -6.0], [7.0, 8.0, 9.0]], [[-10.0, 11.0, 12.0], [13.0, -128.0, 127.0], [0.0, 1.0, 2.0]], [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [7.0, 8.0, 9.0]], [[-10.0, 11.0, 12.0], [13.0, -128.0, 127.0], [0.0, 1.0, 2.0]], [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 4.0]]]]> : tensor<2x5x3x3xf32>
  %y = call @conv_product(%x, %w) : (tensor<1x5x6x6xf32>, tensor<2x5x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}
func.func private @conv_convert(%x: tensor<1x5x6x6xi8>) -> tensor<1x5x6x6xf32> {
  %c = arith.constant dense<3> : tensor<i32>
  %e = tensor.empty() : tensor<1x5x6x6xf32>
  %r = linalg.generic {indexing_maps = [#map, #scalar, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<1x5x6x6xi8>, tensor<i32>) outs(%e : tensor<1x5x6x6xf32>) {
  ^bb0(%in: i8, %k: i32, %out: f32):
    %w = arith.extui %in : i8 to i32
    %s = arith.subi %w, %k : i32
    %f = arith.sitofp %s : i32 to f32
    linalg.yield %f : f32
  } -> tensor<1x5x6x6xf32>
  return %r : tensor<1x5x6x6xf32>
}
func.func private @conv_product(%x: tensor<1x5x6x6xf32>, %w: tensor<2x5x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %pad = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %pad : f32
  } : tensor<1x5x6x6xf32> to tensor<1x5x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x5x8x8xf32>, tensor<2x5x3x3xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A convolution whose input is padded with anything but the zero (here 1.0, no byte's
// conversion): the f32 convolution stays.
// CHECK-LABEL: func.func private @one_padded_product(
// CHECK:         tensor.pad
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-NOT:     func.call @llvm.x86.avx512.vpdpbusd.512
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @one_padded(%a: tensor<1x4x4x4xi8>) -> tensor<1x2x4x4xf32> {
  %x = call @one_padded_convert(%a) : (tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xf32>
  %w = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<2x4x1x1xf32>
  %y = call @one_padded_product(%x, %w) : (tensor<1x4x4x4xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
func.func private @one_padded_convert(%x: tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xf32> {
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x4xi8>) outs(%e : tensor<1x4x4x4xf32>) {
  ^bb0(%in: i8, %out: f32):
    %f = arith.uitofp %in : i8 to f32
    linalg.yield %f : f32
  } -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}
func.func private @one_padded_product(%x: tensor<1x4x4x4xf32>, %w: tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %pad = arith.constant 1.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %pad : f32
  } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) outs(%init : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// The importer's i32 convolution (sums past f32's exact integers), of bytes converted to
// i32 (b - 3): the same kernel, its i32 product read back as NCHW without a conversion.
// CHECK-LABEL: func.func private @i32_conv_product(
// CHECK-SAME:      %{{[a-z0-9_]+}}: tensor<1x5x4x4xi8>, %{{[a-z0-9_]+}}: tensor<5x16xi32>
// CHECK:         tensor.pad
// CHECK:           tensor.yield %{{.*}} : i8
// CHECK:         func.call @llvm.x86.avx512.vpdpbusd.512
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x4x4xi32>) outs(%{{.*}} : tensor<1x2x4x4xi32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      linalg.yield %[[IN]] : i32
// AVX2-LABEL:  func.func private @i32_conv_product(
// AVX2:          linalg.conv_2d_nchw_fchw
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
func.func @i32_conv(%a: tensor<1x5x4x4xi8>) -> tensor<1x2x4x4xi32> {
  %x = call @i32_conv_convert(%a) : (tensor<1x5x4x4xi8>) -> tensor<1x5x4x4xi32>
  %w = arith.constant dense<[[[[1, -2, 3]], [[4, 5, -6]], [[7, 8, 9]], [[-10, 11, 12]], [[13, -128, 127]]], [[[0, 1, 2]], [[1, 1, 1]], [[2, 2, 2]], [[3, 3, 3]], [[4, 4, 4]]]]> : tensor<2x5x1x3xi32>
  %y = call @i32_conv_product(%x, %w) : (tensor<1x5x4x4xi32>, tensor<2x5x1x3xi32>) -> tensor<1x2x4x4xi32>
  return %y : tensor<1x2x4x4xi32>
}
func.func private @i32_conv_convert(%x: tensor<1x5x4x4xi8>) -> tensor<1x5x4x4xi32> {
  %c = arith.constant dense<3> : tensor<i32>
  %e = tensor.empty() : tensor<1x5x4x4xi32>
  %r = linalg.generic {indexing_maps = [#map, #scalar, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<1x5x4x4xi8>, tensor<i32>) outs(%e : tensor<1x5x4x4xi32>) {
  ^bb0(%in: i8, %k: i32, %out: i32):
    %w = arith.extui %in : i8 to i32
    %s = arith.subi %w, %k : i32
    linalg.yield %s : i32
  } -> tensor<1x5x4x4xi32>
  return %r : tensor<1x5x4x4xi32>
}
func.func private @i32_conv_product(%x: tensor<1x5x4x4xi32>, %w: tensor<2x5x1x3xi32>) -> tensor<1x2x4x4xi32> {
  %pad = arith.constant 0 : i32
  %padded = tensor.pad %x low[0, 0, 0, 1] high[0, 0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %pad : i32
  } : tensor<1x5x4x4xi32> to tensor<1x5x4x6xi32>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x2x4x4xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x2x4x4xi32>) -> tensor<1x2x4x4xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x5x4x6xi32>, tensor<2x5x1x3xi32>) outs(%init : tensor<1x2x4x4xi32>) -> tensor<1x2x4x4xi32>
  return %y : tensor<1x2x4x4xi32>
}
