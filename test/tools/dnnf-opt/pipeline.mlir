// Individual pass flags (run in order), textual pipelines mixing ECG and upstream
// passes, nested anchors. Canonicalization removes the unused pure ecg.mul.
// RUN: dnnf-opt %s --canonicalize --ecg-op-stats=output=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t.json
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(canonicalize,ecg-op-stats{output=%t2.json},func.func(cse))' | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t2.json
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(func.func(canonicalize,ecg-op-stats{output=%t3.json}))' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// A pass flag with several options, read from stdin (an argument holding a space is no input file):
// RUN: cat %s | dnnf-opt --canonicalize="max-iterations=5 region-simplify=normal" --cse | FileCheck %s
// RUN: dnnf-opt %s --mlir-print-ir-after-all --canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// Output to a device is written in place: /dev/null stays a device (a rename over it
// once turned it into a regular file for the whole machine).
// RUN: test -c /dev/null
// RUN: not dnnf-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=BADPASS
// RUN: not dnnf-opt %s --ecg-op-stats=colour=red 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: dnnf-opt --help | FileCheck %s --check-prefix=HELP

// CHECK-LABEL: func.func @main
// CHECK: "ecg.add"
// CHECK-NOT: "ecg.mul"
// STATS: "main": {
// STATS: "ops": 2,
// STATS: "One-to-One": 2,
// STATS: "flops": 12,
// STATS: "intermediate_bytes": 48,
// AFTER: IR Dump After Canonicalizer
// BADPASS: dnnf-opt: error: {{.*}}'no-such-pass' does not refer to a registered pass or pass pipeline
// BADOPT: dnnf-opt: error: pass 'ecg-op-stats' has no option 'colour'
// HELP: ECG passes
// HELP: --ecg-op-stats
// HELP: output=<str>
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "ecg.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %unused = "ecg.mul"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "ecg.relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
