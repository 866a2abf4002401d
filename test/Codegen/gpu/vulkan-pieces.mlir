// Results made of pieces, each a group of the kernel's one launch (codegen/gpu/concats.py):
// a concatenation returned and read (its pieces computed in place, the reader split at
// them), a padded result (its interior computed in place, its border filled), a
// concatenation of concatenations read by a max pool, a grouped convolution's
// channels shuffled into a concatenation, and one value concatenated twice.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// A DenseNet layer: the new features (a convolution) after the old ones, returned, and
// the whole normalized: the convolution computed once, in the normalization's tiles,
// written to both results; no copy between the launch's groups.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func private @kernel_0(%x: tensor<1x16x14x14xf32>, %w: tensor<8x16x3x3xf32>, %old: tensor<1x24x12x12xf32>,
                            %scale: tensor<32xf32>) -> (tensor<1x32x12x12xf32>, tensor<1x32x12x12xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x12x12xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x16x14x14xf32>, tensor<8x16x3x3xf32>) outs(%f : tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32>
  %features = tensor.concat dim(1) %old, %c : (tensor<1x24x12x12xf32>, tensor<1x8x12x12xf32>) -> tensor<1x32x12x12xf32>
  %e2 = tensor.empty() : tensor<1x32x12x12xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%features, %scale : tensor<1x32x12x12xf32>, tensor<32xf32>) outs(%e2 : tensor<1x32x12x12xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x32x12x12xf32>
  return %features, %y : tensor<1x32x12x12xf32>, tensor<1x32x12x12xf32>
}

func.func @main(%x: tensor<1x16x14x14xf32>, %w: tensor<8x16x3x3xf32>, %old: tensor<1x24x12x12xf32>, %scale: tensor<32xf32>)
    -> (tensor<1x32x12x12xf32>, tensor<1x32x12x12xf32>) {
  %r:2 = call @kernel_0(%x, %w, %old, %scale) : (tensor<1x16x14x14xf32>, tensor<8x16x3x3xf32>, tensor<1x24x12x12xf32>, tensor<32xf32>)
      -> (tensor<1x32x12x12xf32>, tensor<1x32x12x12xf32>)
  return %r#0, %r#1 : tensor<1x32x12x12xf32>, tensor<1x32x12x12xf32>
}

// -----

// A padded result: the clipped convolution computed in the interior, four border slabs
// filled with zeros, all in one launch (no gather of the convolution, no second one).
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func private @kernel_0(%x: tensor<1x3x18x18xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x18x18xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x3x18x18xf32>, tensor<16x3x3x3xf32>) outs(%f : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %e2 = tensor.empty() : tensor<1x16x16x16xf32>
  %clipped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c : tensor<1x16x16x16xf32>) outs(%e2 : tensor<1x16x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<1x16x16x16xf32>
  %padded = tensor.pad %clipped low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x16x16x16xf32> to tensor<1x16x18x18xf32>
  return %padded : tensor<1x16x18x18xf32>
}

func.func @main(%x: tensor<1x3x18x18xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x18x18xf32> {
  %r = call @kernel_0(%x, %w) : (tensor<1x3x18x18xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x18x18xf32>
  return %r : tensor<1x16x18x18xf32>
}

// -----

// Inception's end: branches concatenated in two steps (one concatenation of three
// pieces) and the next block's padded max pool over it, split at the pieces (each
// padding a gather of an argument, not of the concatenation the kernel computes).
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func private @kernel_0(%a: tensor<1x8x9x9xf32>, %b: tensor<1x16x9x9xf32>, %c: tensor<1x4x9x9xf32>)
    -> (tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>) attributes {dnnf.kernel} {
  %lowest = arith.constant -3.40282347E+38 : f32
  %ab = tensor.concat dim(1) %a, %b : (tensor<1x8x9x9xf32>, tensor<1x16x9x9xf32>) -> tensor<1x24x9x9xf32>
  %abc = tensor.concat dim(1) %ab, %c : (tensor<1x24x9x9xf32>, tensor<1x4x9x9xf32>) -> tensor<1x28x9x9xf32>
  %padded = tensor.pad %abc low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %lowest : f32
  } : tensor<1x28x9x9xf32> to tensor<1x28x11x11xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x28x9x9xf32>
  %f = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x28x9x9xf32>) -> tensor<1x28x9x9xf32>
  %pooled = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %window : tensor<1x28x11x11xf32>, tensor<3x3xf32>) outs(%f : tensor<1x28x9x9xf32>) -> tensor<1x28x9x9xf32>
  return %abc, %pooled : tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>
}

func.func @main(%a: tensor<1x8x9x9xf32>, %b: tensor<1x16x9x9xf32>, %c: tensor<1x4x9x9xf32>)
    -> (tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>) {
  %r:2 = call @kernel_0(%a, %b, %c) : (tensor<1x8x9x9xf32>, tensor<1x16x9x9xf32>, tensor<1x4x9x9xf32>)
      -> (tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>)
  return %r#0, %r#1 : tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>
}

// -----

// One value concatenated twice: the op computing it fills the first half in place, a
// copy of it the second (a copy of the first half would read another group's result),
// in one launch. Before, the op was to fill both, and the second found its init
// already replaced (a TypeError out of the compiler).
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x3x4xf32>, %[[Y:[a-z0-9]+]]: memref<2x6x4xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: %[[SECOND:.+]] = memref.subview %[[Y]][0, 3, 0] [2, 3, 4] [1, 1, 1]
// CHECK: %[[FIRST_VIEW:.+]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [2, 3, 4]
// CHECK: %[[SECOND_VIEW:.+]] = memref.reinterpret_cast %[[SECOND]] to offset: [12], sizes: [2, 3, 4]
// CHECK: gpu.launch_func {{.*}} args(%[[X]] : memref<2x3x4xf32>, %[[FIRST_VIEW]] : {{.*}}, %[[SECOND_VIEW]] : {{.*}}) {dnnf.gpu.writes = [false, true, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(n, c, w) -> (n, c, w)>
func.func private @kernel_0(%x: tensor<2x3x4xf32>) -> tensor<2x6x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4xf32>
  %y = tensor.concat dim(1) %r, %r : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  return %y : tensor<2x6x4xf32>
}

func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x6x4xf32> {
  %r = call @kernel_0(%x) : (tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  return %r : tensor<2x6x4xf32>
}
