// A kernel reading a concatenation it builds in place (codegen/gpu/phases.py): fusion
// cannot tile the pieces through their inserts into the destination, so the pieces are
// computed a launch before their readers: the four 2 x 2 phases of a grid (strided
// slices) concatenated along the channels, then each token's row normalized (here: its
// sum subtracted), in an order that is no transpose of the grid (Swin's patch merging
// is one: vulkan-strided-concats.mlir, one launch). Two launches: every piece written
// into its slice of the concatenation's buffer, then the rows read from it. Before, one
// launch per op.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x8x8x8xf32>, %[[Y:[a-z0-9]+]]: memref<1x16x32xf32>
// CHECK-SAME: dnnf.gpu.fallback = "kernel kernel_0: linalg.generic reads a concatenation that linalg.generic and 3 more build in place
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: %[[C:.*]] = memref.alloc() {{.*}} : memref<1x4x4x32xf32>
// CHECK: gpu.launch_func {{.*}} args({{.*}}) {dnnf.gpu.writes = [false, true, false, true, false, true, false, true]}
// CHECK: gpu.launch_func {{.*}} args(%[[C]] : memref<1x4x4x32xf32>, %[[Y]] : memref<1x16x32xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#row = affine_map<(b, t, c) -> (b, t)>
func.func private @kernel_0(%x: tensor<1x8x8x8xf32>) -> tensor<1x16x32xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p0 = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p1 = tensor.extract_slice %x[0, 1, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p2 = tensor.extract_slice %x[0, 0, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p3 = tensor.extract_slice %x[0, 1, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %c = tensor.concat dim(3) %p0, %p1, %p2, %p3 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x32xf32>
  %t = tensor.collapse_shape %c [[0], [1, 2], [3]] : tensor<1x4x4x32xf32> into tensor<1x16x32xf32>
  %e1 = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
         ins(%t : tensor<1x16x32xf32>) outs(%f : tensor<1x16xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %e2 = tensor.empty() : tensor<1x16x32xf32>
  %y = linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%t, %sum : tensor<1x16x32xf32>, tensor<1x16xf32>) outs(%e2 : tensor<1x16x32xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.subf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x16x32xf32>
  return %y : tensor<1x16x32xf32>
}

func.func @main(%x: tensor<1x8x8x8xf32>) -> tensor<1x16x32xf32> {
  %r = call @kernel_0(%x) : (tensor<1x8x8x8xf32>) -> tensor<1x16x32xf32>
  return %r : tensor<1x16x32xf32>
}

// -----

// A cyclic shift that ``rotations.py`` cannot move to the kernel's arguments (the value
// rolled computes from its row index, ``exp(x) + h``; Swin's, of a normalization's
// rows, is one launch: vulkan-rotations.mlir): a grid rolled by 2 along both axes (each
// roll two slices concatenated, the second slicing the first), then partitioned into
// windows. Three launches: the first roll's two pieces, computed into their slices of
// one buffer; the second roll's two pieces, copied from it into another; the windows
// read from that.
// (A slice of a concatenation rewritten as the concatenation of its pieces' slices
// would make it two, but Swin's OpenCL artifact then segfaulted in PoCL in the first
// launch of its normalization over the four 2-D pieces, cause not found (Vulkan
// matched): not done.)
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x8x8x8xf32>, %[[Y:[a-z0-9]+]]: memref<1x2x2x4x4x8xf32>
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: %[[C:.*]] = memref.alloc() {{.*}} : memref<1x8x8x8xf32>
// CHECK: gpu.launch_func {{.*}} args({{.*}}) {dnnf.gpu.writes = [false, true, false, true]}
// CHECK: gpu.launch_func {{.*}} args({{.*}}) {dnnf.gpu.writes = [false, true, false, true]}
// CHECK: gpu.launch_func {{.*}} args(%[[C]] : memref<1x8x8x8xf32>, %[[Y]] : memref<1x2x2x4x4x8xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id4 = affine_map<(b, h, w, c) -> (b, h, w, c)>
#part = affine_map<(b, i, j, r, s, c) -> (b, i, r, j, s, c)>
#id6 = affine_map<(b, i, j, r, s, c) -> (b, i, j, r, s, c)>
func.func private @kernel_0(%x: tensor<1x8x8x8xf32>) -> tensor<4x16x8xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x : tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = linalg.index 1 : index
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %r = math.exp %a : f32
    %p = arith.addf %r, %hf : f32
    linalg.yield %p : f32
  } -> tensor<1x8x8x8xf32>
  %t1 = tensor.extract_slice %n[0, 2, 0, 0] [1, 6, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x6x8x8xf32>
  %h1 = tensor.extract_slice %n[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x2x8x8xf32>
  %rows = tensor.concat dim(1) %t1, %h1 : (tensor<1x6x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x8x8x8xf32>
  %t2 = tensor.extract_slice %rows[0, 0, 2, 0] [1, 8, 6, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x8x6x8xf32>
  %h2 = tensor.extract_slice %rows[0, 0, 0, 0] [1, 8, 2, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x8x2x8xf32>
  %both = tensor.concat dim(2) %t2, %h2 : (tensor<1x8x6x8xf32>, tensor<1x8x2x8xf32>) -> tensor<1x8x8x8xf32>
  %grid = tensor.expand_shape %both [[0], [1, 2], [3, 4], [5]] output_shape [1, 2, 4, 2, 4, 8] : tensor<1x8x8x8xf32> into tensor<1x2x4x2x4x8xf32>
  %e6 = tensor.empty() : tensor<1x2x2x4x4x8xf32>
  %w = linalg.generic {indexing_maps = [#part, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
       ins(%grid : tensor<1x2x4x2x4x8xf32>) outs(%e6 : tensor<1x2x2x4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x2x4x4x8xf32>
  %y = tensor.collapse_shape %w [[0, 1, 2], [3, 4], [5]] : tensor<1x2x2x4x4x8xf32> into tensor<4x16x8xf32>
  return %y : tensor<4x16x8xf32>
}

func.func @main(%x: tensor<1x8x8x8xf32>) -> tensor<4x16x8xf32> {
  %r = call @kernel_0(%x) : (tensor<1x8x8x8xf32>) -> tensor<4x16x8xf32>
  return %r : tensor<4x16x8xf32>
}
