// The pass pipelines of lowering/cpu/ run with dnnf-opt --pass-pipeline-file: bufferize
// turns the result into a caller-allocated out-parameter; to-llvm takes the loops of
// the buffers to the LLVM dialect.
// RUN: dnnf-opt %s --pass-pipeline-file=%lowering/cpu/prepare.pipeline | FileCheck %s --check-prefix=PREPARE
// RUN: dnnf-opt %s --pass-pipeline-file=%lowering/cpu/bufferize.pipeline | FileCheck %s --check-prefix=BUFFERS
// RUN: dnnf-opt %s --pass-pipeline-file=%lowering/cpu/bufferize.pipeline \
// RUN:   | dnnf-opt --pass-pipeline-file=%lowering/cpu/deallocate.pipeline \
// RUN:   | dnnf-opt --pass-pipeline-file=%lowering/cpu/to-llvm.pipeline | FileCheck %s --check-prefix=LLVM
// RUN: not dnnf-opt %s --pass-pipeline-file=%t.missing.pipeline 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not dnnf-opt %s --pass-pipeline-file=%lowering/cpu/prepare.pipeline --canonicalize 2>&1 | FileCheck %s --check-prefix=BOTH

// Two element-wise generics become one.
// PREPARE-LABEL: func.func @add_relu
// PREPARE-COUNT-1: linalg.generic
// PREPARE-NOT: linalg.generic

// BUFFERS-LABEL: func.func @add_relu(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>)
// BUFFERS-NOT: tensor<

// LLVM-LABEL: llvm.func @add_relu
// LLVM: llvm.fadd
// LLVM: llvm.intr.maximum

// MISSING: dnnf-opt: error: No such file or directory: '{{.*}}missing.pipeline'
// BOTH: dnnf-opt: error: --pass-pipeline, --pass-pipeline-file and individual pass flags are exclusive
#id = affine_map<(i, j) -> (i, j)>
func.func @add_relu(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
