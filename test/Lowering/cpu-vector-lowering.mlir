// lowering/cpu/vector-lowering.mlir, the transform library the CPU pipeline runs after
// bufferization, through stock passes: a vector.contract becomes one broadcast FMA per
// accumulator row (outer products), nothing of the contraction is left.
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=%lowering/cpu/vector-lowering.mlir},transform-interpreter{entry-point=__dnnf_lower_vectors})' | FileCheck %s

// CHECK-LABEL: func.func @outer_product
// CHECK-NOT: vector.contract
// CHECK-COUNT-4: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: vector.contract
func.func @outer_product(%a: vector<4x1xf32>, %b: vector<1x8xf32>, %c: vector<4x8xf32>) -> vector<4x8xf32> {
  %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
       %a, %b, %c : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
  return %r : vector<4x8xf32>
}
