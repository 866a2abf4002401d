// Readers of a value the kernel computes, read through a collapse of several dims
// above 1 (Swin's tokens collapsed from a window grid), each get a collapse of their
// own, which the reshape propagation then expands into the value's shape
// (codegen/gpu/collapsed_reads.py): the kernel is one launch. Before, the value was
// computed by a launch of its own and read as tokens by a second ("phased").
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// Swin's window merge: 2 x 2 windows of 4 x 4 tokens of 8 channels back into the grid,
// read as 64 tokens, each token centred on its channels' sum: the sum and the centring
// iterate over the grid, one launch writes both results.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x2x4x4x8xf32>, %[[G:[a-z0-9]+]]: memref<2x4x2x4x8xf32>, %[[C:[a-z0-9]+]]: memref<64x8xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[X]] : memref<2x2x4x4x8xf32>, %[[G]] : memref<2x4x2x4x8xf32>, %[[C]] : memref<64x8xf32>) {dnnf.gpu.writes = [false, true, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#t = affine_map<(a, b, c, d, e) -> (a, c, b, d, e)>
#id5 = affine_map<(a, b, c, d, e) -> (a, b, c, d, e)>
#rows = affine_map<(r, c) -> (r, c)>
#row = affine_map<(r, c) -> (r)>
func.func private @kernel_0(%x: tensor<2x2x4x4x8xf32>) -> (tensor<2x4x2x4x8xf32>, tensor<64x8xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x2x4x8xf32>
  %g = linalg.generic {indexing_maps = [#t, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
       ins(%x : tensor<2x2x4x4x8xf32>) outs(%e : tensor<2x4x2x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x2x4x8xf32>
  %tokens = tensor.collapse_shape %g [[0, 1, 2, 3], [4]] : tensor<2x4x2x4x8xf32> into tensor<64x8xf32>
  %es = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
       ins(%tokens : tensor<64x8xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %ec = tensor.empty() : tensor<64x8xf32>
  %c = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
       ins(%tokens, %s : tensor<64x8xf32>, tensor<64xf32>) outs(%ec : tensor<64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  return %g, %c : tensor<2x4x2x4x8xf32>, tensor<64x8xf32>
}

func.func @main(%x: tensor<2x2x4x4x8xf32>) -> (tensor<2x4x2x4x8xf32>, tensor<64x8xf32>) {
  %r:2 = call @kernel_0(%x) : (tensor<2x2x4x4x8xf32>) -> (tensor<2x4x2x4x8xf32>, tensor<64x8xf32>)
  return %r#0, %r#1 : tensor<2x4x2x4x8xf32>, tensor<64x8xf32>
}

// -----

// A patch embedding's 8 channels of a 4 x 4 grid moved last and read as 16 tokens,
// normalized over the channels: the mean and the variance (two accumulators, each a
// fill read through the propagation's expand, ``reshaped_fills``) and the result
// iterate over the 4 x 4 grid, the last one written into the tokens through a view.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x4x4xf32>, %[[Y:[a-z0-9]+]]: memref<16x8xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[X]] : memref<8x4x4xf32>, %[[Y]] : memref<16x8xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#chw = affine_map<(h, w, c) -> (c, h, w)>
#hwc = affine_map<(h, w, c) -> (h, w, c)>
#tc = affine_map<(t, c) -> (t, c)>
#t = affine_map<(t, c) -> (t)>
func.func private @kernel_0(%x: tensor<8x4x4xf32>) -> tensor<16x8xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %eg = tensor.empty() : tensor<4x4x8xf32>
  %g = linalg.generic {indexing_maps = [#chw, #hwc], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<8x4x4xf32>) outs(%eg : tensor<4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4x8xf32>
  %tokens = tensor.collapse_shape %g [[0, 1], [2]] : tensor<4x4x8xf32> into tensor<16x8xf32>
  %es = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#tc, #t], iterator_types = ["parallel", "reduction"]}
       ins(%tokens : tensor<16x8xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %ec = tensor.empty() : tensor<16x8xf32>
  %c = linalg.generic {indexing_maps = [#tc, #t, #tc], iterator_types = ["parallel", "parallel"]}
       ins(%tokens, %s : tensor<16x8xf32>, tensor<16xf32>) outs(%ec : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %eight = arith.constant 8.0 : f32
    %m = arith.divf %b, %eight : f32
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %v = linalg.generic {indexing_maps = [#tc, #t], iterator_types = ["parallel", "reduction"]}
       ins(%c : tensor<16x8xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %q = arith.mulf %a, %a : f32
    %r = arith.addf %q, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %en = tensor.empty() : tensor<16x8xf32>
  %n = linalg.generic {indexing_maps = [#tc, #t, #tc], iterator_types = ["parallel", "parallel"]}
       ins(%c, %v : tensor<16x8xf32>, tensor<16xf32>) outs(%en : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %n : tensor<16x8xf32>
}

func.func @main(%x: tensor<8x4x4xf32>) -> tensor<16x8xf32> {
  %r = call @kernel_0(%x) : (tensor<8x4x4xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

// Not when a reader reads the collapse through a map that is not a projected
// permutation (each token's first channel, a constant index): the propagation cannot
// expand it, the collapse stays shared, and the kernel stays two launches, the grid
// written by the first, read as tokens by the second.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x4x4xf32>, %[[G:[a-z0-9]+]]: memref<4x4x8xf32>, %[[C:[a-z0-9]+]]: memref<16x8xf32>
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: gpu.launch_func {{.*}} args(%[[X]] : memref<8x4x4xf32>, %[[G]] : memref<4x4x8xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK: gpu.launch_func {{.*}} args(%[[G]] : memref<4x4x8xf32>, %[[C]] : memref<16x8xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#chw = affine_map<(h, w, c) -> (c, h, w)>
#hwc = affine_map<(h, w, c) -> (h, w, c)>
#tc = affine_map<(t, c) -> (t, c)>
#first = affine_map<(t, c) -> (t, 0)>
func.func private @kernel_0(%x: tensor<8x4x4xf32>) -> (tensor<4x4x8xf32>, tensor<16x8xf32>) attributes {dnnf.kernel} {
  %eg = tensor.empty() : tensor<4x4x8xf32>
  %g = linalg.generic {indexing_maps = [#chw, #hwc], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<8x4x4xf32>) outs(%eg : tensor<4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4x8xf32>
  %tokens = tensor.collapse_shape %g [[0, 1], [2]] : tensor<4x4x8xf32> into tensor<16x8xf32>
  %ec = tensor.empty() : tensor<16x8xf32>
  %c = linalg.generic {indexing_maps = [#tc, #first, #tc], iterator_types = ["parallel", "parallel"]}
       ins(%tokens, %tokens : tensor<16x8xf32>, tensor<16x8xf32>) outs(%ec : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %g, %c : tensor<4x4x8xf32>, tensor<16x8xf32>
}

func.func @main(%x: tensor<8x4x4xf32>) -> (tensor<4x4x8xf32>, tensor<16x8xf32>) {
  %r:2 = call @kernel_0(%x) : (tensor<8x4x4xf32>) -> (tensor<4x4x8xf32>, tensor<16x8xf32>)
  return %r#0, %r#1 : tensor<4x4x8xf32>, tensor<16x8xf32>
}
