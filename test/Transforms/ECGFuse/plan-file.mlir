// ecg-fuse's plan-file: the plan as data (fusion/plan_graph.py), one box per kernel in
// launch order, which a profiled artifact keeps for dnnf-run --profile-svg. The diamond
// of cycle.mlir: the Relu alone (box 0, no mapping), then the MatMul with its Add
// epilogue (box 1, Many-to-Many); the Relu's result is materialised (it feeds both), the
// MatMul's stays in its block.
// RUN: dnnf-opt %s --ecg-fuse=plan-file=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=PLAN < %t.json
// RUN: dnnf-opt %s --ecg-fuse=svg-file=%t.svg -o /dev/null
// RUN: FileCheck %s --check-prefix=SVG < %t.svg

// SVG:       <g id="launch_1" class="cluster">
// SVG:       #1 Many&#45;to&#45;Many
// SVG:       <g id="launch_0" class="node">
// SVG:       #0 relu

// CHECK-LABEL: func.func @diamond
// CHECK:         "ecg.fused"
// PLAN:       "labels": [
// PLAN-NEXT:    "input 0",
// PLAN-NEXT:    "input 1",
// PLAN-NEXT:    "relu",
// PLAN-NEXT:    "mat_mul",
// PLAN-NEXT:    "add",
// PLAN-NEXT:    "output 0"
// PLAN:       "boxes": [
// PLAN-NEXT:   {
// PLAN-NEXT:    "nodes": [
// PLAN-NEXT:     2
// PLAN-NEXT:    ],
// PLAN-NEXT:    "mapping": null
// PLAN-NEXT:   },
// PLAN-NEXT:   {
// PLAN-NEXT:    "nodes": [
// PLAN-NEXT:     3,
// PLAN-NEXT:     4
// PLAN-NEXT:    ],
// PLAN-NEXT:    "mapping": "Many-to-Many"
// PLAN:       "edges": [
// PLAN-NEXT:   {
// PLAN-NEXT:    "producer": 0,
// PLAN-NEXT:    "consumer": 2,
// PLAN-NEXT:    "nbytes": 128,
// PLAN-NEXT:    "inside": false
// PLAN:         "producer": 3,
// PLAN-NEXT:    "consumer": 4,
// PLAN-NEXT:    "nbytes": 128,
// PLAN-NEXT:    "inside": true
func.func @diamond(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "ecg.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ecg.mat_mul"(%0, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = "ecg.add"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
