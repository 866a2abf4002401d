// A recurrence's states across its time steps (codegen/cpu/step_states.py): the
// element-wise op producing each yielded state writes into the state it replaces (an
// input reading that state at the same index is read from the output instead), so the
// states are updated in place: no buffer is allocated in the loop. The step's 1-row
// matmul over R^T (not a matrix-vector product with a horizontal sum per output) gets
// one register tile of as many vectors as the accumulator budget allows (here all 64
// columns: eight AVX2 accumulators, the k loop unrolled by 4).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=cpu=x86-64-v3 | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @cell(
// CHECK:         scf.for %{{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}) -> (tensor<1x64xf32>, tensor<1x64xf32>)
// CHECK:           linalg.matmul ins(%[[H]], %{{.*}} : tensor<1x64xf32>, tensor<64x64xf32>)
// CHECK:           %[[NEWC:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x64xf32>) outs(%[[C]] : tensor<1x64xf32>)
// CHECK:           %[[NEWH:.*]] = linalg.generic {{.*}} ins(%[[NEWC]] : tensor<1x64xf32>) outs(%[[H]] : tensor<1x64xf32>)
// CHECK:           scf.yield %[[NEWH]], %[[NEWC]]
// BUF-LABEL: func.func @cell(
// BUF:         scf.for %{{.*}} = %c0 to %c8 step %c1 {
// BUF-NOT:       memref.alloc
// BUF:           scf.for %{{.*}} = %c0 to %c64 step %c4 iter_args(%{{.*}}) -> (vector<1x64xf32>)
// BUF-NOT:       memref.alloc
// BUF:         } {dnnf.time_steps}
#id = affine_map<(i, j) -> (i, j)>
func.func @cell(%r: tensor<64x64xf32>, %h0: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %rt = linalg.transpose ins(%r : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) permutation = [1, 0]
  %out:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%h = %h0, %c = %h0) -> (tensor<1x64xf32>, tensor<1x64xf32>) {
    %e1 = tensor.empty() : tensor<1x64xf32>
    %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x64xf32>) -> tensor<1x64xf32>
    %g = linalg.matmul ins(%h, %rt : tensor<1x64xf32>, tensor<64x64xf32>) outs(%f : tensor<1x64xf32>) -> tensor<1x64xf32>
    %e2 = tensor.empty() : tensor<1x64xf32>
    %nc = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%g, %c : tensor<1x64xf32>, tensor<1x64xf32>) outs(%e2 : tensor<1x64xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.mulf %a, %b : f32
      %u = arith.addf %t, %a : f32
      linalg.yield %u : f32
    } -> tensor<1x64xf32>
    %e3 = tensor.empty() : tensor<1x64xf32>
    %nh = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%nc : tensor<1x64xf32>) outs(%e3 : tensor<1x64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.maximumf %a, %z : f32
      linalg.yield %t : f32
    } -> tensor<1x64xf32>
    scf.yield %nh, %nc : tensor<1x64xf32>, tensor<1x64xf32>
  } {dnnf.time_steps}
  return %out#0 : tensor<1x64xf32>
}

// -----

// A state produced by a reduction keeps its fresh result.
// CHECK-LABEL: func.func @reduced_state(
// CHECK:         scf.for %{{.*}} iter_args(%[[S:.*]] = %{{.*}})
// CHECK:           linalg.generic {{.*}} ins(%[[S]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NOT:       outs(%[[S]]
#in = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> (i)>
func.func @reduced_state(%x: tensor<4x8xf32>, %s0: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %out = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %x) -> (tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#in, #red], iterator_types = ["parallel", "reduction"]}
         ins(%s : tensor<4x8xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.addf %a, %o : f32
      linalg.yield %t : f32
    } -> tensor<4xf32>
    %b = tensor.empty() : tensor<4x8xf32>
    %n = linalg.broadcast ins(%r : tensor<4xf32>) outs(%b : tensor<4x8xf32>) dimensions = [1]
    scf.yield %n : tensor<4x8xf32>
  } {dnnf.time_steps}
  %f = tensor.extract_slice %out[0, 0] [4, 1] [1, 1] : tensor<4x8xf32> to tensor<4xf32>
  return %f : tensor<4xf32>
}
