// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg --verify-diagnostics
// Without --verify-diagnostics the error is printed at the op and dnnf-opt fails.
// RUN: not dnnf-opt %s --split-input-file --convert-ecg-to-linalg 2>&1 | FileCheck %s
// CHECK: invalid.mlir:[[# @LINE + 9]]:8: error: failed to legalize operation 'ecg.add': unsigned element type ui8
// CHECK: invalid.mlir:[[# @LINE + 18]]:10: error: failed to legalize operation 'ecg.mul'
// CHECK: error: failed to legalize operation 'ecg.max_pool': 3-d pooling

// An op the pass cannot lower fails it at the op; nothing is rewritten, not even the
// ops that could be lowered.
func.func @nothing_rewritten(%x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xui8>) {
  %0 = "ecg.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{failed to legalize operation 'ecg.add': unsigned element type ui8 (arith works on signless integers)}}
  %1 = "ecg.add"(%u, %u) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0, %1 : tensor<4xf32>, tensor<4xui8>
}

// -----

// Inside a fused block, the error is at the body's op.
func.func @in_fused_body(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "ecg.fused"(%x) ({
  ^bb0(%a: tensor<4xui8>):
    // expected-error @+1 {{failed to legalize operation 'ecg.mul': unsigned element type ui8 (arith works on signless integers)}}
    %1 = "ecg.mul"(%a, %a) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    "ecg.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xui8>) -> ()
  }) {mapping = "One-to-One", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// A lowering that does not handle a configuration says which.
func.func @pool3d(%x: tensor<1x4x5x5x5xf32>) -> tensor<1x4x4x4x4xf32> {
  // expected-error @+1 {{failed to legalize operation 'ecg.max_pool': 3-d pooling is not supported by convert-ecg-to-linalg}}
  %0 = "ecg.max_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : i64, dilations = array<i64: 1, 1, 1>, kernel_shape = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, storage_order = 0 : i64, strides = array<i64: 1, 1, 1>} : (tensor<1x4x5x5x5xf32>) -> tensor<1x4x4x4x4xf32>
  return %0 : tensor<1x4x4x4x4xf32>
}
