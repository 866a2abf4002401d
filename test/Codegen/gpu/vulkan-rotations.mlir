// Cyclic shifts (codegen/gpu/rotations.py): a concatenation of two slices of one tensor
// that together form a rotation (torch.roll) moves up through the ops that compute the
// rotated value row by row to the kernel's arguments, which the kernel reads at the
// rotated index. Swin's shifted windows: the normalized residual sum rolled by 2 along
// both axes of its 8 x 8 token grid, then partitioned into windows, is one launch.
// Before, the rows went into the first roll's pieces, those into the second's, and the
// windows were read from them: three launches.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func @kernel_0_kernel::@kernel_0_kernel
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK: arith.cmpi uge, %{{.*}}, %c8 : index
// CHECK: memref.load %{{.*}} : memref<1x64x8xf32>
// CHECK: gpu.return
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#row = affine_map<(b, t, c) -> (b, t)>
func.func private @kernel_0(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> (tensor<1x64x8xf32>, tensor<4x16x8xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<1x64x8xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%x, %r : tensor<1x64x8xf32>, tensor<1x64x8xf32>) outs(%e : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x64x8xf32>
  %e1 = tensor.empty() : tensor<1x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x64xf32>) -> tensor<1x64xf32>
  %squares = linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
             ins(%sum : tensor<1x64x8xf32>) outs(%f : tensor<1x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %n = arith.addf %m, %acc : f32
    linalg.yield %n : f32
  } -> tensor<1x64xf32>
  %e2 = tensor.empty() : tensor<1x64x8xf32>
  %normalized = linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
                ins(%sum, %squares : tensor<1x64x8xf32>, tensor<1x64xf32>) outs(%e2 : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %t = arith.addf %q, %eps : f32
    %s = math.rsqrt %t : f32
    %y = arith.mulf %a, %s : f32
    linalg.yield %y : f32
  } -> tensor<1x64x8xf32>
  %grid = tensor.expand_shape %normalized [[0], [1, 2], [3]] output_shape [1, 8, 8, 8] : tensor<1x64x8xf32> into tensor<1x8x8x8xf32>
  %tail = tensor.extract_slice %grid[0, 2, 0, 0] [1, 6, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x6x8x8xf32>
  %head = tensor.extract_slice %grid[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x2x8x8xf32>
  %rows = tensor.concat dim(1) %tail, %head : (tensor<1x6x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x8x8x8xf32>
  %right = tensor.extract_slice %rows[0, 0, 2, 0] [1, 8, 6, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x8x6x8xf32>
  %left = tensor.extract_slice %rows[0, 0, 0, 0] [1, 8, 2, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x8x2x8xf32>
  %rolled = tensor.concat dim(2) %right, %left : (tensor<1x8x6x8xf32>, tensor<1x8x2x8xf32>) -> tensor<1x8x8x8xf32>
  %split = tensor.expand_shape %rolled [[0], [1, 2], [3, 4], [5]] output_shape [1, 2, 4, 2, 4, 8] : tensor<1x8x8x8xf32> into tensor<1x2x4x2x4x8xf32>
  %e3 = tensor.empty() : tensor<1x2x2x4x4x8xf32>
  %moved = linalg.transpose ins(%split : tensor<1x2x4x2x4x8xf32>) outs(%e3 : tensor<1x2x2x4x4x8xf32>) permutation = [0, 1, 3, 2, 4, 5]
  %windows = tensor.collapse_shape %moved [[0, 1, 2], [3, 4], [5]] : tensor<1x2x2x4x4x8xf32> into tensor<4x16x8xf32>
  return %sum, %windows : tensor<1x64x8xf32>, tensor<4x16x8xf32>
}

func.func @main(%x: tensor<1x64x8xf32>, %r: tensor<1x64x8xf32>) -> (tensor<1x64x8xf32>, tensor<4x16x8xf32>) {
  %y:2 = call @kernel_0(%x, %r) : (tensor<1x64x8xf32>, tensor<1x64x8xf32>) -> (tensor<1x64x8xf32>, tensor<4x16x8xf32>)
  return %y#0, %y#1 : tensor<1x64x8xf32>, tensor<4x16x8xf32>
}

// -----

// A roll of a stencil's result along the axis the stencil reads at an offset
// (``y[t] = x[t] + z[t + 1]``) is left as it was: the rotated index of ``y`` is no
// rotation of ``z``'s. The transpose reading it is split at the pieces (``concats.py``),
// which read ``x`` and ``z`` at plain offsets, no wrap-around.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-NOT: arith.cmpi uge, %{{[0-9]+}}, %c64 : index
// CHECK: gpu.return
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#next = affine_map<(b, t, c) -> (b, t + 1, c)>
func.func private @kernel_0(%x: tensor<1x64x8xf32>, %z: tensor<1x65x8xf32>) -> tensor<1x8x64xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x64x8xf32>
  %pairs = linalg.generic {indexing_maps = [#id3, #next, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
           ins(%x, %z : tensor<1x64x8xf32>, tensor<1x65x8xf32>) outs(%e : tensor<1x64x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x64x8xf32>
  %tail = tensor.extract_slice %pairs[0, 3, 0] [1, 61, 8] [1, 1, 1] : tensor<1x64x8xf32> to tensor<1x61x8xf32>
  %head = tensor.extract_slice %pairs[0, 0, 0] [1, 3, 8] [1, 1, 1] : tensor<1x64x8xf32> to tensor<1x3x8xf32>
  %rolled = tensor.concat dim(1) %tail, %head : (tensor<1x61x8xf32>, tensor<1x3x8xf32>) -> tensor<1x64x8xf32>
  %e3 = tensor.empty() : tensor<1x8x64xf32>
  %moved = linalg.transpose ins(%rolled : tensor<1x64x8xf32>) outs(%e3 : tensor<1x8x64xf32>) permutation = [0, 2, 1]
  return %moved : tensor<1x8x64xf32>
}

func.func @main(%x: tensor<1x64x8xf32>, %z: tensor<1x65x8xf32>) -> tensor<1x8x64xf32> {
  %y = call @kernel_0(%x, %z) : (tensor<1x64x8xf32>, tensor<1x65x8xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}
