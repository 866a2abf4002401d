// lowering/cpu/matmul.mlir, the CPU matmul micro-kernel, run by stock passes: the
// sequences the kernel plan calls, in its order, with the parameters it would compute
// for AVX-512 (8 x 32 register tiles). Change a sequence of the library and this test
// shows the loops it makes.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=%lowering/cpu/matmul.mlir},transform-interpreter{entry-point=schedule},canonicalize,cse)' | FileCheck %s

// The n loop outside the m loop, the K x 32 panel of B packed once per n step (a
// nofold pad outside the m loop), the accumulator in registers across k, four k steps
// per iteration, each one outer product.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.for %[[N:.*]] = %c0 to %c256 step %c32
// CHECK: tensor.pad %{{.*}} nofold
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c4 iter_args(%{{.*}} = %{{.*}}) -> (tensor<8x32xf32>)
// CHECK-COUNT-4: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT: = linalg.matmul
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x256xf32>) -> tensor<64x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%init : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence private @__dnnf_matmul_register_tiles(!transform.any_op {transform.consumed}, !transform.param<i64> {transform.readonly}, !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.named_sequence private @__dnnf_matmul_pack_b(!transform.any_op {transform.consumed}) -> !transform.any_op
  transform.named_sequence private @__dnnf_matmul_k_steps(!transform.any_op {transform.consumed}) -> !transform.any_op
  transform.named_sequence private @__dnnf_matmul_vectorize(!transform.any_op {transform.consumed}, !transform.any_op {transform.consumed})

  transform.named_sequence @schedule(%root: !transform.any_op {transform.readonly}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %mr = transform.param.constant 8 : i64 -> !transform.param<i64>
    %nr = transform.param.constant 32 : i64 -> !transform.param<i64>
    %tiled, %tiles, %m = transform.include @__dnnf_matmul_register_tiles failures(propagate) (%matmul, %mr, %nr)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %packed = transform.include @__dnnf_matmul_pack_b failures(propagate) (%tiled) : (!transform.any_op) -> !transform.any_op
    %k = transform.include @__dnnf_matmul_k_steps failures(propagate) (%packed) : (!transform.any_op) -> !transform.any_op
    transform.loop.unroll %k {factor = 4} : !transform.any_op
    %steps = transform.structured.match ops{["linalg.matmul"]} in %tiles : (!transform.any_op) -> !transform.any_op
    %fills = transform.structured.match ops{["linalg.fill"]} in %tiles : (!transform.any_op) -> !transform.any_op
    transform.include @__dnnf_matmul_vectorize failures(propagate) (%steps, %fills) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
}

// -----

// A batch matmul (the batch dim tiled by one) with a bias + ReLU epilogue as the root
// of the tiling: the epilogue is applied to the accumulator tile before the one store;
// k steps of one (K = 5: no unrolling).
// CHECK-LABEL: func.func @batch_matmul_epilogue
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c5 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x8x16xf32>)
// CHECK: vector.contract {{.*}} : vector<1x8x1xf32>, vector<1x1x16xf32> into vector<1x8x16xf32>
// CHECK: arith.maximumf %{{.*}} : vector<1x8x16xf32>
// CHECK-NEXT: vector.transfer_write
// CHECK-NOT: = linalg.batch_matmul
func.func @batch_matmul_epilogue(%a: tensor<2x16x5xf32>, %b: tensor<2x5x32xf32>, %bias: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x16x5xf32>, tensor<2x5x32xf32>) outs(%init : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r, %bias : tensor<2x16x32xf32>, tensor<32xf32>) outs(%empty : tensor<2x16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<2x16x32xf32>
  return %o : tensor<2x16x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence private @__dnnf_batch_matmul_epilogue_register_tiles(!transform.any_op {transform.consumed}, !transform.param<i64> {transform.readonly}, !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.named_sequence private @__dnnf_batch_matmul_k_steps(!transform.any_op {transform.consumed}) -> !transform.any_op
  transform.named_sequence private @__dnnf_matmul_vectorize(!transform.any_op {transform.consumed}, !transform.any_op {transform.consumed})

  transform.named_sequence @schedule(%root: !transform.any_op {transform.readonly}) {
    %epilogue = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %mr = transform.param.constant 8 : i64 -> !transform.param<i64>
    %nr = transform.param.constant 16 : i64 -> !transform.param<i64>
    %tiled, %tiles, %n, %m = transform.include @__dnnf_batch_matmul_epilogue_register_tiles failures(propagate) (%epilogue, %mr, %nr)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %matmul = transform.structured.match ops{["linalg.batch_matmul"]} in %tiles : (!transform.any_op) -> !transform.any_op
    %k = transform.include @__dnnf_batch_matmul_k_steps failures(propagate) (%matmul) : (!transform.any_op) -> !transform.any_op
    %steps = transform.structured.match ops{["linalg.batch_matmul"]} in %tiles : (!transform.any_op) -> !transform.any_op
    %fills = transform.structured.match ops{["linalg.fill"]} in %tiles : (!transform.any_op) -> !transform.any_op
    transform.include @__dnnf_matmul_vectorize failures(propagate) (%steps, %fills) : (!transform.any_op, !transform.any_op) -> ()
    transform.structured.vectorize %tiled : !transform.any_op
    transform.yield
  }
}

// -----

// M = 37 and N = 77, not multiples of the 8 x 32 register tile, with a bias + ReLU
// epilogue: the m loop's partial tile is peeled off first, then the n loop's; after
// canonicalization every tile is static (8 or 5 rows by 32 or 13 columns), each with
// its epilogue applied before its one store, and no operand is padded.
// CHECK-LABEL: func.func @matmul_peeled
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: arith.maximumf %{{.*}} : vector<8x32xf32>
// CHECK: vector.contract {{.*}} : vector<5x1xf32>, vector<1x32xf32> into vector<5x32xf32>
// CHECK: arith.maximumf %{{.*}} : vector<5x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x13xf32> into vector<8x13xf32>
// CHECK: arith.maximumf %{{.*}} : vector<8x13xf32>
// CHECK: vector.contract {{.*}} : vector<5x1xf32>, vector<1x13xf32> into vector<5x13xf32>
// CHECK: arith.maximumf %{{.*}} : vector<5x13xf32>
// CHECK-NOT: tensor.pad
// CHECK-NOT: = linalg.
func.func @matmul_peeled(%a: tensor<37x8xf32>, %b: tensor<8x77xf32>, %bias: tensor<37xf32>) -> tensor<37x77xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<37x77xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<37x77xf32>) -> tensor<37x77xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x8xf32>, tensor<8x77xf32>) outs(%init : tensor<37x77xf32>) -> tensor<37x77xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<37x77xf32>, tensor<37xf32>) outs(%empty : tensor<37x77xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<37x77xf32>
  return %o : tensor<37x77xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence private @__dnnf_matmul_epilogue_register_tiles(!transform.any_op {transform.consumed}, !transform.param<i64> {transform.readonly}, !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.named_sequence private @__dnnf_peel_partial_tile(!transform.any_op {transform.consumed}) -> (!transform.any_op, !transform.any_op)
  transform.named_sequence private @__dnnf_matmul_k_steps(!transform.any_op {transform.consumed}) -> !transform.any_op
  transform.named_sequence private @__dnnf_matmul_vectorize(!transform.any_op {transform.consumed}, !transform.any_op {transform.consumed})

  transform.named_sequence @schedule(%root: !transform.any_op {transform.readonly}) {
    %epilogue = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %func = transform.get_parent_op %epilogue {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    %mr = transform.param.constant 8 : i64 -> !transform.param<i64>
    %nr = transform.param.constant 32 : i64 -> !transform.param<i64>
    %tiled, %n, %m = transform.include @__dnnf_matmul_epilogue_register_tiles failures(propagate) (%epilogue, %mr, %nr)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %whole_rows, %partial_rows = transform.include @__dnnf_peel_partial_tile failures(propagate) (%m)
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %whole_columns, %partial_columns = transform.include @__dnnf_peel_partial_tile failures(propagate) (%n)
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %func : (!transform.any_op) -> !transform.any_op
    %k = transform.include @__dnnf_matmul_k_steps failures(propagate) (%matmuls) : (!transform.any_op) -> !transform.any_op
    %steps = transform.structured.match ops{["linalg.matmul"]} in %func : (!transform.any_op) -> !transform.any_op
    %fills = transform.structured.match ops{["linalg.fill"]} in %func : (!transform.any_op) -> !transform.any_op
    transform.include @__dnnf_matmul_vectorize failures(propagate) (%steps, %fills) : (!transform.any_op, !transform.any_op) -> ()
    %epilogues = transform.structured.match ops{["linalg.generic"]} in %func : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %epilogues : !transform.any_op
    transform.yield
  }
}
