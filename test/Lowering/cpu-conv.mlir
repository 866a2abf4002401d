// lowering/cpu/conv.mlir, the CPU convolution micro-kernel, run by stock passes: the
// sequences the kernel plan calls, in its order, with the parameters it would compute
// for AVX-512 (8 output channels x 32 columns per register tile, the 3x3 window
// unrolled).
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=%lowering/cpu/conv.mlir},transform-interpreter{entry-point=schedule},canonicalize,cse)' | FileCheck %s

// Channel blocks outside rows outside column blocks; the input channels in a loop whose
// body is the whole 3x3 window: 9 contractions of 32 columns x 8 channels.
// CHECK-LABEL: func.func @conv
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c12 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x8x1x32xf32>)
// CHECK-NOT: scf.for
// CHECK-COUNT-9: vector.contract {{.*}} : vector<1x1x32xf32>, vector<1x8xf32> into vector<1x8x32xf32>
// CHECK-NOT: = linalg.conv
func.func @conv(%x: tensor<1x8x14x66xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x16x12x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x12x64xf32>) -> tensor<1x16x12x64xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x8x14x66xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x12x64xf32>) -> tensor<1x16x12x64xf32>
  return %r : tensor<1x16x12x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence private @__dnnf_conv2d_register_tiles(!transform.any_op {transform.consumed}, !transform.param<i64> {transform.readonly}, !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op)
  transform.named_sequence private @__dnnf_conv2d_reduction_steps(!transform.any_op {transform.consumed}) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.named_sequence private @__dnnf_conv2d_vectorize(!transform.any_op {transform.consumed}, !transform.any_op {transform.readonly})

  transform.named_sequence @schedule(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    %fr = transform.param.constant 8 : i64 -> !transform.param<i64>
    %wv = transform.param.constant 32 : i64 -> !transform.param<i64>
    %tiled, %tiles = transform.include @__dnnf_conv2d_register_tiles failures(propagate) (%conv, %fr, %wv)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %c, %kh, %kw = transform.include @__dnnf_conv2d_reduction_steps failures(propagate) (%tiled)
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.loop.unroll %kw {factor = 3} : !transform.any_op
    transform.loop.unroll %kh {factor = 3} : !transform.any_op
    %steps = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %tiles : (!transform.any_op) -> !transform.any_op
    transform.include @__dnnf_conv2d_vectorize failures(propagate) (%steps, %tiles) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
}
