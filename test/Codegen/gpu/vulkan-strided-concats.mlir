// Swin's patch merging: the 2 x 2 phases of an 8 x 8 grid of tokens (strided slices)
// concatenated along the channels, then summed per merged token (a layer
// normalization's first reduction). When the pieces count the phases' offsets in a
// mixed radix, the concatenation is an expand, a transpose and a collapse of the grid
// (codegen/gpu/strided_concats.py), which the reduction reads through its maps: one
// launch. Before, the pieces were computed a launch before the reduction read across
// them ("phased"), as they still are in an order that is no transpose.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// Swin's order, (row, column) = (0, 0), (1, 0), (0, 1), (1, 1): the column's phase varies slowest.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%{{.*}} : memref<1x4x2x4x2x8xf32>, %{{.*}} : memref<1x4x2x4x2x8xf32>, %{{.*}} : memref<1x4x4xf32>) {dnnf.gpu.writes = [false, false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(b, t, c) -> (b, t, c)>
func.func private @kernel_0(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x64x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x, %r : tensor<1x64x8xf32>, tensor<1x64x8xf32>) outs(%e : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<1x64x8xf32>
  %g = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [1, 8, 8, 8] : tensor<1x64x8xf32> into tensor<1x8x8x8xf32>
  %p0 = tensor.extract_slice %g[0, 0, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p1 = tensor.extract_slice %g[0, 1, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p2 = tensor.extract_slice %g[0, 0, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p3 = tensor.extract_slice %g[0, 1, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %c = tensor.concat dim(3) %p0, %p1, %p2, %p3 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x32xf32>
  %t = tensor.collapse_shape %c [[0], [1, 2], [3]] : tensor<1x4x4x32xf32> into tensor<1x16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sum = linalg.reduce ins(%t : tensor<1x16x32xf32>) outs(%f : tensor<1x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    }
  return %sum : tensor<1x16xf32>
}

func.func @main_kernel_0(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> {
  %y = call @kernel_0(%x, %r) : (tensor<1x64x8xf32>, tensor<1x64x8xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// The same phases as torch slices them, rows first, then columns (a slice of a slice).
// CHECK-LABEL: func.func private @kernel_1(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%{{.*}} : memref<1x4x2x4x2x8xf32>, %{{.*}} : memref<1x4x2x4x2x8xf32>, %{{.*}} : memref<1x4x4xf32>) {dnnf.gpu.writes = [false, false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(b, t, c) -> (b, t, c)>
func.func private @kernel_1(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x64x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x, %r : tensor<1x64x8xf32>, tensor<1x64x8xf32>) outs(%e : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<1x64x8xf32>
  %g = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [1, 8, 8, 8] : tensor<1x64x8xf32> into tensor<1x8x8x8xf32>
  %rows0 = tensor.extract_slice %g[0, 0, 0, 0] [1, 4, 8, 8] [1, 2, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x4x8x8xf32>
  %p0 = tensor.extract_slice %rows0[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 2, 1] : tensor<1x4x8x8xf32> to tensor<1x4x4x8xf32>
  %rows1 = tensor.extract_slice %g[0, 1, 0, 0] [1, 4, 8, 8] [1, 2, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x4x8x8xf32>
  %p1 = tensor.extract_slice %rows1[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 2, 1] : tensor<1x4x8x8xf32> to tensor<1x4x4x8xf32>
  %rows2 = tensor.extract_slice %g[0, 0, 0, 0] [1, 4, 8, 8] [1, 2, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x4x8x8xf32>
  %p2 = tensor.extract_slice %rows2[0, 0, 1, 0] [1, 4, 4, 8] [1, 1, 2, 1] : tensor<1x4x8x8xf32> to tensor<1x4x4x8xf32>
  %rows3 = tensor.extract_slice %g[0, 1, 0, 0] [1, 4, 8, 8] [1, 2, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x4x8x8xf32>
  %p3 = tensor.extract_slice %rows3[0, 0, 1, 0] [1, 4, 4, 8] [1, 1, 2, 1] : tensor<1x4x8x8xf32> to tensor<1x4x4x8xf32>
  %c = tensor.concat dim(3) %p0, %p1, %p2, %p3 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x32xf32>
  %t = tensor.collapse_shape %c [[0], [1, 2], [3]] : tensor<1x4x4x32xf32> into tensor<1x16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sum = linalg.reduce ins(%t : tensor<1x16x32xf32>) outs(%f : tensor<1x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    }
  return %sum : tensor<1x16xf32>
}

func.func @main_kernel_1(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> {
  %y = call @kernel_1(%x, %r) : (tensor<1x64x8xf32>, tensor<1x64x8xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// Row-major order: the row's phase varies slowest.
// CHECK-LABEL: func.func private @kernel_2(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%{{.*}} : memref<1x4x2x4x2x8xf32>, %{{.*}} : memref<1x4x2x4x2x8xf32>, %{{.*}} : memref<1x4x4xf32>) {dnnf.gpu.writes = [false, false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(b, t, c) -> (b, t, c)>
func.func private @kernel_2(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x64x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x, %r : tensor<1x64x8xf32>, tensor<1x64x8xf32>) outs(%e : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<1x64x8xf32>
  %g = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [1, 8, 8, 8] : tensor<1x64x8xf32> into tensor<1x8x8x8xf32>
  %p0 = tensor.extract_slice %g[0, 0, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p1 = tensor.extract_slice %g[0, 0, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p2 = tensor.extract_slice %g[0, 1, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p3 = tensor.extract_slice %g[0, 1, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %c = tensor.concat dim(3) %p0, %p1, %p2, %p3 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x32xf32>
  %t = tensor.collapse_shape %c [[0], [1, 2], [3]] : tensor<1x4x4x32xf32> into tensor<1x16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sum = linalg.reduce ins(%t : tensor<1x16x32xf32>) outs(%f : tensor<1x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    }
  return %sum : tensor<1x16xf32>
}

func.func @main_kernel_2(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> {
  %y = call @kernel_2(%x, %r) : (tensor<1x64x8xf32>, tensor<1x64x8xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// An order that is no transpose: the pieces first, then the sums.
// CHECK-LABEL: func.func private @kernel_3(
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: gpu.launch_func
// CHECK: gpu.launch_func {{.*}} args(%{{.*}} : memref<1x4x4x32xf32>, %{{.*}} : memref<1x4x4xf32>)
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(b, t, c) -> (b, t, c)>
func.func private @kernel_3(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x64x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x, %r : tensor<1x64x8xf32>, tensor<1x64x8xf32>) outs(%e : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<1x64x8xf32>
  %g = tensor.expand_shape %s [[0], [1, 2], [3]] output_shape [1, 8, 8, 8] : tensor<1x64x8xf32> into tensor<1x8x8x8xf32>
  %p0 = tensor.extract_slice %g[0, 0, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p1 = tensor.extract_slice %g[0, 1, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p2 = tensor.extract_slice %g[0, 0, 1, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %p3 = tensor.extract_slice %g[0, 1, 0, 0] [1, 4, 4, 8] [1, 2, 2, 1] : tensor<1x8x8x8xf32> to tensor<1x4x4x8xf32>
  %c = tensor.concat dim(3) %p0, %p1, %p2, %p3 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x32xf32>
  %t = tensor.collapse_shape %c [[0], [1, 2], [3]] : tensor<1x4x4x32xf32> into tensor<1x16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sum = linalg.reduce ins(%t : tensor<1x16x32xf32>) outs(%f : tensor<1x16xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    }
  return %sum : tensor<1x16xf32>
}

func.func @main_kernel_3(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> tensor<1x16xf32> {
  %y = call @kernel_3(%x, %r) : (tensor<1x64x8xf32>, tensor<1x64x8xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
