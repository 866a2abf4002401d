// A matmul whose B is computed at run time (a 1x1 convolution's image) reads B's panels
// in place where fewer than 16 row tiles read each one, K is at least 32 and the panel
// rows are whole cache lines (codegen/cpu/matmul.py, packs_runtime_b); otherwise the
// schedule packs each K x NR panel once per column tile, as before.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=V4
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=V3
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --stop-after=bufferize | FileCheck %s --check-prefix=BUF

// 4 row tiles of 8 (AVX-512), 8 of 4 (AVX2): read in place, no panel buffer.
// V4: linalg.matmul [32, 736, 256] matmul {'register_tile': (8, 32), 'padded': False, 'k_unroll': 4} @few_row_tiles
// V3: linalg.matmul [32, 736, 256] matmul {'register_tile': (4, 16), 'padded': False, 'k_unroll': 4} @few_row_tiles
// BUF-LABEL: func.func @few_row_tiles(
// BUF-NOT:     memref.alloc() {{.*}} : memref<256x32xf32>
// BUF:         return
func.func @few_row_tiles(%a: tensor<32x256xf32>, %b: tensor<256x736xf32>) -> tensor<32x736xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x736xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x736xf32>) -> tensor<32x736xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x256xf32>, tensor<256x736xf32>) outs(%init : tensor<32x736xf32>) -> tensor<32x736xf32>
  return %r : tensor<32x736xf32>
}

// 16 row tiles (AVX-512), 32 (AVX2): packed.
// V4: linalg.matmul [128, 96, 64] matmul {'register_tile': (8, 32), 'padded': False, 'packed_b': (64, 32), 'k_unroll': 4} @many_row_tiles
// V3: linalg.matmul [128, 96, 64] matmul {'register_tile': (4, 16), 'padded': False, 'packed_b': (64, 16), 'k_unroll': 4} @many_row_tiles
// BUF-LABEL: func.func @many_row_tiles(
// BUF:         memref.alloc() {{.*}} : memref<64x32xf32>
// BUF:         return
func.func @many_row_tiles(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x96xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>) outs(%init : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}

// K = 16: packed (panels of 2 KiB; SqueezeNet's 16 -> 64 expand ran 1.05x slower unpacked).
// V4: linalg.matmul [32, 224, 16] matmul {'register_tile': (8, 32), 'padded': False, 'packed_b': (16, 32), 'k_unroll': 4} @short_k
// V3: linalg.matmul [32, 224, 16] matmul {'register_tile': (4, 16), 'padded': False, 'packed_b': (16, 16), 'k_unroll': 4} @short_k
// BUF-LABEL: func.func @short_k(
// BUF:         memref.alloc() {{.*}} : memref<16x32xf32>
// BUF:         return
func.func @short_k(%a: tensor<32x16xf32>, %b: tensor<16x224xf32>) -> tensor<32x224xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x224xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x224xf32>) -> tensor<32x224xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x224xf32>) outs(%init : tensor<32x224xf32>) -> tensor<32x224xf32>
  return %r : tensor<32x224xf32>
}
