// Attention blocks (ecg-fuse's dnnf mode, after Listing 1): the scores matmul, the
// mask add and softmax block and the probabilities matmul with its transposes become
// one block, the one exception to Table 3's Many-to-Many -> Many-to-Many R cell.
// RUN: dnnf-opt %s --split-input-file --ecg-fuse | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=attention=false | FileCheck %s --check-prefix=OFF
// RUN: dnnf-opt %s --split-input-file --ecg-fuse=mode=tvm | FileCheck %s --check-prefix=TVM
// RUN: dnnf-opt %s --split-input-file '--ecg-fuse=stats-file=-' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// One head chain: one block of six ops, its only result the merged heads.
// CHECK-LABEL: func.func @bert_head
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0, %arg1, %arg2, %arg3) ({
// CHECK:           "ecg.mat_mul"
// CHECK-NEXT:      "ecg.add"
// CHECK-NEXT:      "ecg.softmax"
// CHECK-NEXT:      "ecg.mat_mul"
// CHECK-NEXT:      "ecg.transpose"
// CHECK-NEXT:      "ecg.reshape"
// CHECK-NEXT:      "ecg.yield"
// CHECK-NEXT:    }) {dnnf.ir_removable = array<i1: true, true, true, true, true, false>, mapping = "Many-to-Many"
// CHECK-NEXT:    return %[[F]]
// OFF-LABEL:   func.func @bert_head
// OFF:           %[[S:.*]] = "ecg.mat_mul"(%arg0, %arg1)
// OFF:           %[[P:.*]] = "ecg.fused"(%[[S]], %arg2)
// OFF:           "ecg.fused"(%[[P]], %arg3)
// TVM-LABEL:   func.func @bert_head
// TVM:           %[[P:.*]] = "ecg.softmax"
// TVM-NEXT:      "ecg.mat_mul"(%[[P]], %arg3)
// STATS:         "bert_head": {
// STATS:           "attention": {
// STATS-NEXT:        "blocks": 1
func.func @bert_head(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %mask: tensor<1x1x4x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x16xf32> {
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m = "ecg.add"(%s, %mask) : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = "ecg.softmax"(%m) {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %t = "ecg.transpose"(%o) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x4x8xf32>) -> tensor<1x4x2x8xf32>
  %r = "ecg.reshape"(%t) {shape = array<i64: 1, 4, 16>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}

// -----

// The probabilities are also a result of the function: they are written anyway,
// so the chain stays as Table 3 leaves it.
// CHECK-LABEL: func.func @probabilities_returned
// CHECK-NOT:     "ecg.fused"
// CHECK:         "ecg.mat_mul"(%arg0, %arg1)
// CHECK-NEXT:    %[[P:.*]] = "ecg.softmax"
// CHECK-NEXT:    "ecg.mat_mul"(%[[P]], %arg2)
// CHECK-NEXT:    return %{{.*}}, %[[P]]
// STATS:         "probabilities_returned": {
// STATS:           "attention": {
// STATS-NEXT:        "blocks": 0
func.func @probabilities_returned(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p = "ecg.softmax"(%s) {axis = -1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %p : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// The right operand of the second matmul is weights, not values: its kernel packs
// them, so it takes no producer.
// CHECK-LABEL: func.func @weights
// CHECK:         "ecg.mat_mul"(%arg0, %arg1)
// CHECK:         "ecg.fused"
// CHECK:           "ecg.softmax"
// CHECK:         "ecg.mat_mul"
// STATS:         "weights": {
// STATS:           "attention": {
// STATS-NEXT:        "blocks": 0
func.func @weights(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>) -> tensor<2x4x8xf32> {
  %w = "ecg.constant"() {value = dense<0.5> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %e = "ecg.exp"(%s) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = "ecg.softmax"(%e) {axis = -1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "ecg.mat_mul"(%p, %w) : (tensor<2x4x4xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A softmax over another axis than the last is not over the rows of the scores.
// CHECK-LABEL: func.func @columns
// CHECK-NOT:     "ecg.fused"
// CHECK:         "ecg.mat_mul"(%arg0, %arg1)
// CHECK-NEXT:    "ecg.softmax"
// CHECK-NEXT:    "ecg.mat_mul"
// STATS:         "columns": {
// STATS:           "attention": {
// STATS-NEXT:        "blocks": 0
func.func @columns(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p = "ecg.softmax"(%s) {axis = 1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// The values are computed from the scores by a matmul outside the chain: one block
// would both feed it and read it back, a cycle.
// CHECK-LABEL: func.func @values_from_scores
// CHECK-NOT:     "ecg.fused"
// CHECK:         %[[S:.*]] = "ecg.mat_mul"(%arg0, %arg1)
// CHECK:         %[[V:.*]] = "ecg.mat_mul"(%[[S]], %arg2)
// CHECK:         "ecg.mat_mul"(%{{.*}}, %[[V]])
// STATS:         "values_from_scores": {
// STATS:           "constraints": {
// STATS-NEXT:        "cycle": 1
// STATS:           "attention": {
// STATS-NEXT:        "blocks": 0
func.func @values_from_scores(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>, %w: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %v = "ecg.mat_mul"(%s, %w) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %p = "ecg.softmax"(%s) {axis = -1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// No mask: the softmax fused into nothing is the middle of the chain; the scores
// are a batched matmul of rank 3.
// CHECK-LABEL: func.func @unmasked
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0, %arg1, %arg2) ({
// CHECK:           "ecg.mat_mul"
// CHECK-NEXT:      "ecg.softmax"
// CHECK-NEXT:      "ecg.mat_mul"
// CHECK-NEXT:      "ecg.yield"
// CHECK:         return %[[F]]
// OFF-LABEL:   func.func @unmasked
// OFF-NOT:       "ecg.fused"
// TVM-LABEL:   func.func @unmasked
// TVM-NOT:       "ecg.fused"
// STATS:         "unmasked": {
// STATS:           "attention": {
// STATS-NEXT:        "blocks": 1
func.func @unmasked(%q: tensor<3x4x8xf32>, %kt: tensor<3x8x4xf32>, %v: tensor<3x4x8xf32>) -> tensor<3x4x8xf32> {
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<3x4x8xf32>, tensor<3x8x4xf32>) -> tensor<3x4x4xf32>
  %p = "ecg.softmax"(%s) {axis = 2 : i64} : (tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<3x4x4xf32>, tensor<3x4x8xf32>) -> tensor<3x4x8xf32>
  return %o : tensor<3x4x8xf32>
}
