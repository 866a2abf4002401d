// dnnf-gpu-channel-blocks (codegen/gpu/blocked_kernels.py): an average pooling that does
// not count its padding divides each sum by a constant per pixel ([H, W]); that operand
// has no channel dim, so it reads the same in NC4HW4 and the end of an Inception block
// (relu, nested concatenations, the next block's padded average pooling) stays blocked:
// no NCHW copy of its inputs.
// RUN: dnnf-opt %s --split-input-file --dnnf-gpu-channel-blocks | FileCheck %s

// 8 + 8 + 4 channels concatenated (nested), then a 3x3/1 average pooling padded by 1,
// divided by the count of pixels inside: the kernel reads and writes blocked.
// CHECK-DAG:   #[[PIXEL:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
// CHECK-LABEL: func.func @inception_end(
// CHECK:         %[[A:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK:         %[[B:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    %[[K:.*]]:2 = call @kernel_1_relu_concat_concat_average_pool(%[[A]], %[[B]], %[[A]]) : (tensor<1x2x4x4x4xf32>, tensor<1x2x4x4x4xf32>, tensor<1x2x4x4x4xf32>) -> (tensor<1x5x4x4x4xf32>, tensor<1x5x4x4x4xf32>)
// CHECK-DAG:     call @kernel_nc4hw4_to_nchw_1x20x4x4(%[[K]]#0)
// CHECK-DAG:     call @kernel_nc4hw4_to_nchw_1x20x4x4(%[[K]]#1)
// CHECK-LABEL: func.func private @kernel_1_relu_concat_concat_average_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x4x4x4xf32>, %[[Y:.*]]: tensor<1x2x4x4x4xf32>, %[[Z:.*]]: tensor<1x2x4x4x4xf32>)
// CHECK:         %[[INNER:.*]] = tensor.concat dim(1) %[[X]], %[[Y]] : (tensor<1x2x4x4x4xf32>, tensor<1x2x4x4x4xf32>) -> tensor<1x4x4x4x4xf32>
// CHECK:         %[[OUTER:.*]] = tensor.concat dim(1) %[[INNER]], %{{.*}} : (tensor<1x4x4x4x4xf32>, tensor<1x1x4x4x4xf32>) -> tensor<1x5x4x4x4xf32>
// CHECK:         %[[PAD:.*]] = tensor.pad %[[OUTER]] low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0]
// CHECK:         %[[SUMS:.*]] = linalg.generic {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x5x6x6x4xf32>, tensor<3x3xf32>)
// CHECK:         %[[AVG:.*]] = linalg.generic {indexing_maps = [{{.*}}, #[[PIXEL]], {{.*}}]{{.*}} ins(%[[SUMS]], %{{.*}} : tensor<1x5x4x4x4xf32>, tensor<4x4xf32>)
// CHECK:           arith.divf
// CHECK:         return %[[OUTER]], %[[AVG]] : tensor<1x5x4x4x4xf32>, tensor<1x5x4x4x4xf32>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pixel = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @inception_end(%x: tensor<1x4x4x4xf32>) -> (tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>) {
  %w0 = arith.constant dense<"0x000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF"> : tensor<8x4x3x3xf32>
  %a = call @kernel_0_conv(%x, %w0) : (tensor<1x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32>
  %w1 = arith.constant dense<"0x000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF000000000000003F0000803F000080BF000000BF00000000"> : tensor<8x4x3x3xf32>
  %b = call @kernel_0_conv(%x, %w1) : (tensor<1x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32>
  %k:2 = call @kernel_1_relu_concat_concat_average_pool(%a, %b, %a) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> (tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>)
  return %k#0, %k#1 : tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>
}
func.func private @kernel_0_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32>
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}
func.func private @kernel_1_relu_concat_concat_average_pool(%x: tensor<1x8x4x4xf32>, %y: tensor<1x8x4x4xf32>, %z: tensor<1x8x4x4xf32>) -> (tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %s = tensor.extract_slice %z[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> to tensor<1x4x4x4xf32>
  %e0 = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x4x4x4xf32>) outs(%e0 : tensor<1x4x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x4xf32>
  %c0 = tensor.concat dim(1) %x, %y : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %c1 = tensor.concat dim(1) %c0, %r : (tensor<1x16x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x20x4x4xf32>
  %p = tensor.pad %c1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x20x4x4xf32> to tensor<1x20x6x6xf32>
  %e1 = tensor.empty() : tensor<1x20x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %sums = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %window : tensor<1x20x6x6xf32>, tensor<3x3xf32>) outs(%f : tensor<1x20x4x4xf32>) -> tensor<1x20x4x4xf32>
  %counts = arith.constant dense<[[4.0, 6.0, 6.0, 4.0], [6.0, 9.0, 9.0, 6.0], [6.0, 9.0, 9.0, 6.0], [4.0, 6.0, 6.0, 4.0]]> : tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<1x20x4x4xf32>
  %avg = linalg.generic {indexing_maps = [#id, #pixel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sums, %counts : tensor<1x20x4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<1x20x4x4xf32>) {
  ^bb0(%in: f32, %count: f32, %out: f32):
    %q = arith.divf %in, %count : f32
    linalg.yield %q : f32
  } -> tensor<1x20x4x4xf32>
  return %c1, %avg : tensor<1x20x4x4xf32>, tensor<1x20x4x4xf32>
}

// -----

// 6 channels (a partial block): the lanes past C divide by the same constant divisors as
// the pixel's channels, so they stay finite and the pooling computes blocked; divisors
// passed in as an argument could be zero there, so that kernel stays NCHW, on a copy.
// CHECK-LABEL: func.func @partial_block(
// CHECK:         %[[A:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    %[[A_NCHW:.*]] = call @kernel_nc4hw4_to_nchw_1x6x4x4(%[[A]])
// CHECK-NEXT:    %[[P:.*]] = call @kernel_1_average_pool(%[[A]]) : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK:         call @kernel_2_average_pool(%[[A_NCHW]], %{{.*}}) : (tensor<1x6x4x4xf32>, tensor<4x4xf32>) -> tensor<1x6x4x4xf32>
// CHECK-LABEL: func.func private @kernel_1_average_pool(
// CHECK:         arith.divf
// CHECK-LABEL: func.func private @kernel_2_average_pool(
// CHECK:         linalg.pooling_nchw_sum
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pixel = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @partial_block(%x: tensor<1x4x4x4xf32>, %d: tensor<4x4xf32>) -> (tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>) {
  %w = arith.constant dense<"0x000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F"> : tensor<6x4x3x3xf32>
  %a = call @kernel_0_conv(%x, %w) : (tensor<1x4x4x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
  %p = call @kernel_1_average_pool(%a) : (tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %q = call @kernel_2_average_pool(%a, %d) : (tensor<1x6x4x4xf32>, tensor<4x4xf32>) -> tensor<1x6x4x4xf32>
  return %p, %q : tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>
}
func.func private @kernel_0_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32>
  %e = tensor.empty() : tensor<1x6x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x6x6xf32>, tensor<6x4x3x3xf32>) outs(%f : tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  return %c : tensor<1x6x4x4xf32>
}
func.func private @kernel_1_average_pool(%x: tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> attributes {dnnf.kernel} {
  %counts = arith.constant dense<[[4.0, 6.0, 6.0, 4.0], [6.0, 9.0, 9.0, 6.0], [6.0, 9.0, 9.0, 6.0], [4.0, 6.0, 6.0, 4.0]]> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x4x4xf32> to tensor<1x6x6x6xf32>
  %e = tensor.empty() : tensor<1x6x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %sums = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %window : tensor<1x6x6x6xf32>, tensor<3x3xf32>) outs(%f : tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %avg = linalg.generic {indexing_maps = [#id, #pixel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sums, %counts : tensor<1x6x4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<1x6x4x4xf32>) {
  ^bb0(%in: f32, %count: f32, %out: f32):
    %q = arith.divf %in, %count : f32
    linalg.yield %q : f32
  } -> tensor<1x6x4x4xf32>
  return %avg : tensor<1x6x4x4xf32>
}
func.func private @kernel_2_average_pool(%x: tensor<1x6x4x4xf32>, %counts: tensor<4x4xf32>) -> tensor<1x6x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x4x4xf32> to tensor<1x6x6x6xf32>
  %e = tensor.empty() : tensor<1x6x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %sums = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %window : tensor<1x6x6x6xf32>, tensor<3x3xf32>) outs(%f : tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32>
  %avg = linalg.generic {indexing_maps = [#id, #pixel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sums, %counts : tensor<1x6x4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<1x6x4x4xf32>) {
  ^bb0(%in: f32, %count: f32, %out: f32):
    %q = arith.divf %in, %count : f32
    linalg.yield %q : f32
  } -> tensor<1x6x4x4xf32>
  return %avg : tensor<1x6x4x4xf32>
}
