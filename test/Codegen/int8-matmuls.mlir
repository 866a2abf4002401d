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
// CHECK-NOT:     vpdpbusd
func.func @integer_matmul(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<4x4xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<4x4xi32>) -> tensor<4x4xi32>
  %c = linalg.matmul ins(%a, %b : tensor<4x4xi32>, tensor<4x4xi32>) outs(%init : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %c : tensor<4x4xi32>
}
