// Element-wise ops reading an operand backwards (codegen/gpu/gathers.py): a transposed
// convolution's flipped kernel, a Slice with step -1. MLIR tiles such a read with a
// slice sized from the map of the tile's first and last index (one element of the 2 or
// 16 a tile reads), and the tile no longer verifies (`inferred input/output operand #0
// has shape's dimension #3 to be greater than or equal to 2, but found 1`). The op
// reads that operand by `tensor.extract` at the map's index instead, a gather.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan | FileCheck %s

// A transposed convolution (auto_pad SAME_UPPER, kernel 1x2) as a convolution with the
// kernel flipped along its width: the flip is computed in the convolution's tiles,
// reading w[.., 1 - k].
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch
// CHECK: %[[K:.+]] = arith.subi %c1, %{{.+}} : index
// CHECK: memref.load %arg1[%c0, %{{.+}}, %c0, %[[K]]] : memref<1x2x1x2xf32>
// CHECK: gpu.terminator
#flip = affine_map<(o, i, h, w) -> (0, o, h, -w + 1)>
#id4 = affine_map<(o, i, h, w) -> (o, i, h, w)>
func.func private @kernel_0(%x: tensor<7x1x4x8xf32>, %w: tensor<1x2x1x2xf32>) -> tensor<7x2x4x7xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x1x1x2xf32>
  %flipped = linalg.generic {indexing_maps = [#flip, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
             ins(%w : tensor<1x2x1x2xf32>) outs(%e : tensor<2x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x1x1x2xf32>
  %e1 = tensor.empty() : tensor<7x2x4x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<7x2x4x7xf32>) -> tensor<7x2x4x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %flipped : tensor<7x1x4x8xf32>, tensor<2x1x1x2xf32>) outs(%f : tensor<7x2x4x7xf32>) -> tensor<7x2x4x7xf32>
  return %y : tensor<7x2x4x7xf32>
}

func.func @main(%x: tensor<7x1x4x8xf32>, %w: tensor<1x2x1x2xf32>) -> tensor<7x2x4x7xf32> {
  %y = call @kernel_0(%x, %w) : (tensor<7x1x4x8xf32>, tensor<1x2x1x2xf32>) -> tensor<7x2x4x7xf32>
  return %y : tensor<7x2x4x7xf32>
}

// -----

// A value the kernel computes and returns, and its reversal along the last axis
// (Slice with step -1): the relu's body evaluated on %x read at 15 - j.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch
// CHECK: %[[J:.+]] = arith.subi %c15, %{{.+}} : index
// CHECK: %[[X:.+]] = memref.load %arg0[%{{.+}}, %[[J]]] : memref<8x16xf32>
// CHECK: arith.maximumf %[[X]]
// CHECK: gpu.terminator
#id2 = affine_map<(i, j) -> (i, j)>
#reversed = affine_map<(i, j) -> (i, -j + 15)>
func.func private @kernel_0(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %relu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
          ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %rev = linalg.generic {indexing_maps = [#reversed, #id2], iterator_types = ["parallel", "parallel"]}
         ins(%relu : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  return %relu, %rev : tensor<8x16xf32>, tensor<8x16xf32>
}

func.func @main(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %y:2 = call @kernel_0(%x) : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  return %y#0, %y#1 : tensor<8x16xf32>, tensor<8x16xf32>
}
