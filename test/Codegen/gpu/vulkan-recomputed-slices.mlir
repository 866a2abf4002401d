// A kernel returning a contraction's result whole and reading a small part of it
// (at most 1/8, ``slices.RECOMPUTED_PART``: a recurrent layer's first step reading its
// gates from the whole sequence's input projection) computes that part again in its
// reader's tiles: a copy of the contraction for the part the slices read, split along
// the slices' own axis in turn (codegen/gpu/slices.py). One launch; before, the
// contraction ran in a launch of its own and the step in a second ("phased"). The
// kernel where the step reads a third of the projection stays phased (vulkan-phased.mlir).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// A recurrent layer's first step: the input projection of every step is returned, and
// the step's gate reads the first step's first 16 columns of it (1/9 of it), computed
// again by the step's threads from the step's inputs and the gate's weight columns.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x2x8xf32>, %[[W:[a-z0-9]+]]: memref<8x48xf32>, %[[P:[a-z0-9]+]]: memref<3x2x48xf32>, %[[T:[a-z0-9]+]]: memref<2x16xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[P]] : memref<3x2x48xf32>, %[[X]] : memref<3x2x8xf32>, %[[W]] : memref<8x48xf32>, {{.*}}, %[[T]] : memref<2x16xf32>) {dnnf.gpu.writes = [true, false, false, false, false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#x = affine_map<(s, b, n, k) -> (s, b, k)>
#w = affine_map<(s, b, n, k) -> (k, n)>
#o = affine_map<(s, b, n, k) -> (s, b, n)>
#id = affine_map<(b, n) -> (b, n)>
func.func private @kernel_0(%x: tensor<3x2x8xf32>, %w: tensor<8x48xf32>) -> (tensor<3x2x48xf32>, tensor<2x16xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2x48xf32>) -> tensor<3x2x48xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<3x2x8xf32>, tensor<8x48xf32>) outs(%f : tensor<3x2x48xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x2x48xf32>
  %step = tensor.extract_slice %p[0, 0, 0] [1, 2, 48] [1, 1, 1] : tensor<3x2x48xf32> to tensor<1x2x48xf32>
  %rows = tensor.collapse_shape %step [[0, 1], [2]] : tensor<1x2x48xf32> into tensor<2x48xf32>
  %gate = tensor.extract_slice %rows[0, 0] [2, 16] [1, 1] : tensor<2x48xf32> to tensor<2x16xf32>
  %e2 = tensor.empty() : tensor<2x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%gate : tensor<2x16xf32>) outs(%e2 : tensor<2x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  return %p, %t : tensor<3x2x48xf32>, tensor<2x16xf32>
}

func.func @main(%x: tensor<3x2x8xf32>, %w: tensor<8x48xf32>) -> (tensor<3x2x48xf32>, tensor<2x16xf32>) {
  %r:2 = call @kernel_0(%x, %w) : (tensor<3x2x8xf32>, tensor<8x48xf32>) -> (tensor<3x2x48xf32>, tensor<2x16xf32>)
  return %r#0, %r#1 : tensor<3x2x48xf32>, tensor<2x16xf32>
}
