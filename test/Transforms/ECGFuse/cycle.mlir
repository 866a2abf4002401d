// A diamond: the Relu feeds the MatMul and the Add, and the MatMul feeds the Add too.
// Fusing the Relu with the Add would put the block on both sides of the MatMul, which
// stays outside (a contraction takes no producer into its block): a cycle, which the
// planner finds on the graph and refuses. The Add fuses with the MatMul instead (its
// epilogue) and the Relu, a seed that found nothing to fuse with, stays alone.
// RUN: dnnf-opt %s --ecg-fuse=stats-file=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t.json

// CHECK-LABEL: func.func @diamond
// CHECK-NEXT:    %[[R:.*]] = "ecg.relu"(%arg0)
// CHECK-NEXT:    %[[F:.*]] = "ecg.fused"(%[[R]], %arg1) ({
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>):
// CHECK-NEXT:      %[[M:.*]] = "ecg.mat_mul"(%[[A]], %[[W]])
// CHECK-NEXT:      %[[S:.*]] = "ecg.add"(%[[A]], %[[M]])
// CHECK-NEXT:      "ecg.yield"(%[[S]])
// CHECK:         return %[[F]]
// STATS:       "constraints": {
// STATS-NEXT:    "contraction-operand": 1,
// STATS-NEXT:    "cycle": 1
func.func @diamond(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "ecg.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ecg.mat_mul"(%0, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = "ecg.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
