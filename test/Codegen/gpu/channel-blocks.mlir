// dnnf-gpu-channel-blocks (codegen/gpu/channel_blocks.py, blocked_kernels.py): kernel
// functions of one convolution with constant filters and element-wise ops after it
// compute in NC4HW4 ([N, C/4, H, W, 4], channels past C zero), their filters and
// per-channel operands packed at compile time; a kernel reads an argument blocked where
// a blocked kernel computed it and as NCHW (channels padded) elsewhere; a value read by
// anything else is copied back to NCHW by one kernel of its own.
// RUN: dnnf-opt %s --split-input-file --dnnf-gpu-channel-blocks | FileCheck %s

// Two convolutions, 3 -> 6 -> 5 channels: the first reads the NCHW input (its channels
// padded to 4 by the spatial pad), the second the first's blocked result; the entry's
// result is an NCHW copy.
// CHECK-DAG:   #[[NCHW_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5 * 4 + d8, d2 + d6, d3 + d7)>
// CHECK-DAG:   #[[FILTERS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d5, d6, d7, d8, d4)>
// CHECK-DAG:   #[[BLOCKED_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d2 + d6, d3 + d7, d8)>
// CHECK-DAG:   #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
// CHECK-DAG:   #[[UNBLOCK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4, d2)>
// CHECK-LABEL: func.func @two_convolutions(
// CHECK:         %[[A:.*]] = call @kernel_0_conv_relu(%{{.*}}, %{{.*}}) : (tensor<1x3x5x5xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK:         %[[B:.*]] = call @kernel_1_conv(%[[A]], %{{.*}}) : (tensor<1x2x5x5x4xf32>, tensor<2x2x1x1x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK:         %[[Y:.*]] = call @kernel_nc4hw4_to_nchw_1x5x5x5(%[[B]]) : (tensor<1x2x5x5x4xf32>) -> tensor<1x5x5x5xf32>
// CHECK:         return %[[Y]]
// CHECK-LABEL: func.func private @kernel_0_conv_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x5x5xf32>, %[[W:.*]]: tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK:         %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 1, 1, 1]
// CHECK:         %[[C:.*]] = linalg.generic {indexing_maps = [#[[NCHW_IN]], #[[FILTERS]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[P]], %[[W]] : tensor<1x4x7x7xf32>, tensor<2x1x3x3x4x4xf32>)
// CHECK:         %[[BIASES:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 6.000000e+00, 6.000000e+00]]> : tensor<2x4xf32>
// CHECK:         linalg.generic {indexing_maps = [{{.*}}, #[[BIAS]], {{.*}}]{{.*}} ins(%[[C]], %[[BIASES]] : tensor<1x2x5x5x4xf32>, tensor<2x4xf32>)
// CHECK:           arith.maximumf
// CHECK-LABEL: func.func private @kernel_1_conv(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5x5x4xf32>, %[[W:.*]]: tensor<2x2x1x1x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.generic {indexing_maps = [#[[BLOCKED_IN]], #[[FILTERS]], {{.*}}]{{.*}} ins(%[[X]], %[[W]] : tensor<1x2x5x5x4xf32>, tensor<2x2x1x1x4x4xf32>)
// CHECK-LABEL: func.func private @kernel_nc4hw4_to_nchw_1x5x5x5(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5x5x4xf32>) -> tensor<1x5x5x5xf32>
// CHECK:         %[[M:.*]] = linalg.generic {indexing_maps = [#[[UNBLOCK]], {{.*}}]{{.*}} ins(%[[X]] : tensor<1x2x5x5x4xf32>) outs(%{{.*}} : tensor<1x2x4x5x5xf32>)
// CHECK:         %[[P:.*]] = tensor.collapse_shape %[[M]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x4x5x5xf32> into tensor<1x8x5x5xf32>
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 5, 5, 5] [1, 1, 1, 1] : tensor<1x8x5x5xf32> to tensor<1x5x5x5xf32>
// CHECK:         return %[[S]]
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @two_convolutions(%x: tensor<1x3x5x5xf32>) -> tensor<1x5x5x5xf32> {
  %w0v = arith.constant dense<"0x000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42000080420000824200008442000086420000884200008A4200008C4200008E42000090420000924200009442000096420000984200009A4200009C4200009E420000A0420000A2420000A4420000A6420000A8420000AA420000AC420000AE420000B0420000B2420000B4420000B6420000B8420000BA420000BC420000BE420000C0420000C2420000C4420000C6420000C8420000CA420000CC420000CE420000D0420000D2420000D4420000D6420000D8420000DA420000DC420000DE420000E0420000E2420000E4420000E6420000E8420000EA420000EC420000EE420000F0420000F2420000F4420000F6420000F8420000FA420000FC420000FE420000004300000143000002430000034300000443000005430000064300000743000008430000094300000A4300000B4300000C4300000D4300000E4300000F430000104300001143000012430000134300001443000015430000164300001743000018430000194300001A4300001B4300001C4300001D4300001E4300001F430000204300002143"> : tensor<6x3x3x3xf32>
  %a = call @kernel_0_conv_relu(%x, %w0v) : (tensor<1x3x5x5xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x5x5xf32>
  %w1 = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]]], [[[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]]], [[[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]]], [[[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]]], [[[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]]]]> : tensor<5x6x1x1xf32>
  %b = call @kernel_1_conv(%a, %w1) : (tensor<1x6x5x5xf32>, tensor<5x6x1x1xf32>) -> tensor<1x5x5x5xf32>
  return %b : tensor<1x5x5x5xf32>
}
func.func private @kernel_0_conv_relu(%x: tensor<1x3x5x5xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x6x5x5xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x5x5xf32> to tensor<1x3x7x7xf32>
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x3x7x7xf32>, tensor<6x3x3x3xf32>) outs(%f : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %b3 = tensor.expand_shape %bias [[0, 1, 2]] output_shape [6, 1, 1] : tensor<6xf32> into tensor<6x1x1xf32>
  %e2 = tensor.empty() : tensor<1x6x5x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b3 : tensor<1x6x5x5xf32>, tensor<6x1x1xf32>) outs(%e2 : tensor<1x6x5x5xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x6x5x5xf32>
  return %r : tensor<1x6x5x5xf32>
}
func.func private @kernel_1_conv(%x: tensor<1x6x5x5xf32>, %w: tensor<5x6x1x1xf32>) -> tensor<1x5x5x5xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x5x5xf32>) -> tensor<1x5x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x5x5xf32>, tensor<5x6x1x1xf32>) outs(%f : tensor<1x5x5x5xf32>) -> tensor<1x5x5x5xf32>
  return %c : tensor<1x5x5x5xf32>
}

// -----

// One kernel called with an NCHW argument and with a blocked one: a clone per layout
// (b: blocked, p: as passed). Its bias, an argument every call passes a constant, is
// packed [C/4, 4] at each call; the residual argument of the second call is blocked.
// The run is blocked for its last kernel's 3x3 window.
// CHECK-LABEL: func.func @clones(
// CHECK:         %[[A:.*]] = call @kernel_0_conv_add(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x8x4x4xf32>, tensor<2x2x1x1x4x4xf32>, tensor<2x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK:         %[[B:.*]] = call @kernel_0_conv_add_nc4hw4_bppb(%[[A]], %{{.*}}, %{{.*}}, %[[A]]) : (tensor<1x2x4x4x4xf32>, tensor<2x2x1x1x4x4xf32>, tensor<2x4xf32>, tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK:         %[[C:.*]] = call @kernel_1_conv(%[[B]], %{{.*}}) : (tensor<1x2x4x4x4xf32>, tensor<1x2x3x3x4x4xf32>) -> tensor<1x1x2x2x4xf32>
// CHECK:         call @kernel_nc4hw4_to_nchw_1x1x2x2(%[[C]])
// CHECK-LABEL: func.func private @kernel_0_conv_add(
// CHECK-SAME:      tensor<1x8x4x4xf32>, %{{.*}}: tensor<2x2x1x1x4x4xf32>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-LABEL: func.func private @kernel_0_conv_add_nc4hw4_bppb(
// CHECK-SAME:      tensor<1x2x4x4x4xf32>, %{{.*}}: tensor<2x2x1x1x4x4xf32>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @clones(%x: tensor<1x8x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]]], [[[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]]], [[[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]]], [[[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]]], [[[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]]], [[[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]]], [[[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]]]]> : tensor<8x8x1x1xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %a = call @kernel_0_conv_add(%x, %w, %bias, %x) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %w2 = arith.constant dense<[[[[8.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]]], [[[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]], [[2.0]]], [[[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]], [[3.0]]], [[[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]], [[4.0]]], [[[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]], [[5.0]]], [[[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]], [[6.0]]], [[[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]], [[7.0]]]]> : tensor<8x8x1x1xf32>
  %bias2 = arith.constant dense<[8.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %b = call @kernel_0_conv_add(%a, %w2, %bias2, %a) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %w3 = arith.constant dense<"0x000000000000003E0000803E0000C03E0000003F0000203F0000403F0000603F0000803F0000903F0000A03F0000B03F0000C03F0000D03F0000E03F0000F03F0000004000000840000010400000184000002040000028400000304000003840000040400000484000005040000058400000604000006840000070400000784000008040000084400000884000008C4000009040000094400000984000009C400000A0400000A4400000A8400000AC400000B0400000B4400000B8400000BC400000C0400000C4400000C8400000CC400000D0400000D4400000D8400000DC400000E0400000E4400000E8400000EC400000F0400000F4400000F8400000FC40000000410000024100000441000006410000084100000A4100000C4100000E41"> : tensor<1x8x3x3xf32>
  %c = call @kernel_1_conv(%b, %w3) : (tensor<1x8x4x4xf32>, tensor<1x8x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %c : tensor<1x1x2x2xf32>
}
func.func private @kernel_1_conv(%x: tensor<1x8x4x4xf32>, %w: tensor<1x8x3x3xf32>) -> tensor<1x1x2x2xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<1x8x3x3xf32>) outs(%f : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %c : tensor<1x1x2x2xf32>
}
func.func private @kernel_0_conv_add(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %bias: tensor<8xf32>, %r: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %b3 = tensor.expand_shape %bias [[0, 1, 2]] output_shape [8, 1, 1] : tensor<8xf32> into tensor<8x1x1xf32>
  %e2 = tensor.empty() : tensor<1x8x4x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #bias, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b3, %r : tensor<1x8x4x4xf32>, tensor<8x1x1xf32>, tensor<1x8x4x4xf32>) outs(%e2 : tensor<1x8x4x4xf32>) {
  ^bb0(%in: f32, %bi: f32, %res: f32, %out: f32):
    %t = arith.addf %in, %bi : f32
    %u = arith.addf %t, %res : f32
    linalg.yield %u : f32
  } -> tensor<1x8x4x4xf32>
  return %s : tensor<1x8x4x4xf32>
}

// -----

// Left alone: filters the entry function takes as an argument (not constant), a kernel
// that is no convolution, and a run of 1x1 convolutions only (no window: about as fast
// in either layout, so only its NCHW copies would change).
// CHECK-LABEL: func.func @left_alone(
// CHECK:         %[[A:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         %[[B:.*]] = call @kernel_1_conv(%[[A]], %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         call @kernel_2_pool(%[[B]]) : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
// CHECK-NOT:     nc4hw4
// CHECK-LABEL: func.func private @kernel_0_conv(
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func private @kernel_1_conv(
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @left_alone(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x2x2xf32> {
  %a = call @kernel_0_conv(%x, %w) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %w1 = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[1.0]], [[1.0]], [[1.0]]], [[[2.0]], [[2.0]], [[2.0]], [[2.0]]], [[[3.0]], [[3.0]], [[3.0]], [[3.0]]]]> : tensor<4x4x1x1xf32>
  %b = call @kernel_1_conv(%a, %w1) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %c = call @kernel_2_pool(%b) : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  return %c : tensor<1x4x2x2xf32>
}
func.func private @kernel_0_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}
func.func private @kernel_1_conv(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}
func.func private @kernel_2_pool(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32> attributes {dnnf.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x4x4x4xf32>, tensor<2x2xf32>) outs(%f : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %p : tensor<1x4x2x2xf32>
}

// -----

// A kernel function called in a blocked run and outside one: the blocked call takes a
// clone, the original stays NCHW for the other. A logarithm in the epilogue of 3 channels
// (an infinity of the zeros past C, NaN in the next convolution) keeps its kernel NCHW.
// CHECK-LABEL: func.func @shared(
// CHECK:         %[[A:.*]] = call @kernel_0_pointwise_nc4hw4_pp(%{{.*}}, %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<1x1x1x1x4x4xf32>) -> tensor<1x1x4x4x4xf32>
// CHECK:         %[[B:.*]] = call @kernel_1_window(%[[A]], %{{.*}}) : (tensor<1x1x4x4x4xf32>, tensor<1x1x3x3x4x4xf32>) -> tensor<1x1x2x2x4xf32>
// CHECK:         %[[C:.*]] = call @kernel_0_pointwise(%{{.*}}, %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         call @kernel_2_window_log(%[[C]], %{{.*}}) : (tensor<1x4x4x4xf32>, tensor<3x4x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK-LABEL: func.func private @kernel_0_pointwise(
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func private @kernel_2_window_log(
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func private @kernel_0_pointwise_nc4hw4_pp(
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @shared(%x: tensor<1x4x4x4xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x3x2x2xf32>) {
  %w0 = arith.constant dense<"0x000000000000803E0000003F0000403F0000803F0000A03F0000C03F0000E03F0000004000001040000020400000304000004040000050400000604000007040"> : tensor<4x4x1x1xf32>
  %a = call @kernel_0_pointwise(%x, %w0) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %w1 = arith.constant dense<"0x000000000000803D0000003E0000403E0000803E0000A03E0000C03E0000E03E0000003F0000103F0000203F0000303F0000403F0000503F0000603F0000703F0000803F0000883F0000903F0000983F0000A03F0000A83F0000B03F0000B83F0000C03F0000C83F0000D03F0000D83F0000E03F0000E83F0000F03F0000F83F00000040000004400000084000000C4000001040000014400000184000001C4000002040000024400000284000002C4000003040000034400000384000003C4000004040000044400000484000004C4000005040000054400000584000005C4000006040000064400000684000006C4000007040000074400000784000007C40000080400000824000008440000086400000884000008A4000008C4000008E40000090400000924000009440000096400000984000009A4000009C4000009E400000A0400000A2400000A4400000A6400000A8400000AA400000AC400000AE400000B0400000B2400000B4400000B6400000B8400000BA400000BC400000BE400000C0400000C2400000C4400000C6400000C8400000CA400000CC400000CE400000D0400000D2400000D4400000D6400000D8400000DA400000DC400000DE400000E0400000E2400000E4400000E6400000E8400000EA400000EC400000EE400000F0400000F2400000F4400000F6400000F8400000FA400000FC400000FE400000004100000141000002410000034100000441000005410000064100000741000008410000094100000A4100000B4100000C4100000D4100000E4100000F41"> : tensor<4x4x3x3xf32>
  %b = call @kernel_1_window(%a, %w1) : (tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32>
  %w2 = arith.constant dense<"0x000000000000803E0000003F0000403F0000803F0000A03F0000C03F0000E03F0000004000001040000020400000304000004040000050400000604000007040"> : tensor<4x4x1x1xf32>
  %c = call @kernel_0_pointwise(%x, %w2) : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %w3 = arith.constant dense<0.5> : tensor<3x4x3x3xf32>
  %d = call @kernel_2_window_log(%c, %w3) : (tensor<1x4x4x4xf32>, tensor<3x4x3x3xf32>) -> tensor<1x3x2x2xf32>
  return %b, %d : tensor<1x4x2x2xf32>, tensor<1x3x2x2xf32>
}
func.func private @kernel_0_pointwise(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}
func.func private @kernel_1_window(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %c : tensor<1x4x2x2xf32>
}
func.func private @kernel_2_window_log(%x: tensor<1x4x4x4xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<1x3x2x2xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x4xf32>, tensor<3x4x3x3xf32>) outs(%f : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %e2 = tensor.empty() : tensor<1x3x2x2xf32>
  %l = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x3x2x2xf32>) outs(%e2 : tensor<1x3x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %g = math.log %in : f32
    linalg.yield %g : f32
  } -> tensor<1x3x2x2xf32>
  return %l : tensor<1x3x2x2xf32>
}

// -----

// A max-pooling between two convolutions reads and writes NC4HW4: no NCHW copy between
// them; its -inf pad is spatial only (the blocked lanes past C stay finite).
// CHECK-DAG:   #[[POOL_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4)>
// CHECK-DAG:   #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d5, d6)>
// CHECK-LABEL: func.func @pooling_between(
// CHECK:         %[[A:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x6x6x6xf32>, tensor<2x2x3x3x4x4xf32>) -> tensor<1x2x6x6x4xf32>
// CHECK-NEXT:    %[[P:.*]] = call @kernel_1_max_pool(%[[A]]) : (tensor<1x2x6x6x4xf32>) -> tensor<1x2x3x3x4xf32>
// CHECK-NOT:     nc4hw4_to_nchw
// CHECK:         %[[C:.*]] = call @kernel_2_conv(%[[P]], %{{.*}}) : (tensor<1x2x3x3x4xf32>, tensor<1x2x1x1x4x4xf32>) -> tensor<1x1x3x3x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = call @kernel_nc4hw4_to_nchw_1x4x3x3(%[[C]])
// CHECK-NEXT:    return %[[Y]]
// CHECK-LABEL: func.func private @kernel_1_max_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x6x6x4xf32>) -> tensor<1x2x3x3x4xf32>
// CHECK:         %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0]
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x3x3x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[POOL_IN]], #[[WINDOW]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[PAD]], %{{.*}} : tensor<1x2x8x8x4xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x3x3x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         return %[[R]]
func.func @pooling_between(%x: tensor<1x6x6x6xf32>) -> tensor<1x4x3x3xf32> {
  %w0 = arith.constant dense<"0x0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF"> : tensor<6x6x3x3xf32>
  %a = call @kernel_0_conv(%x, %w0) : (tensor<1x6x6x6xf32>, tensor<6x6x3x3xf32>) -> tensor<1x6x6x6xf32>
  %p = call @kernel_1_max_pool(%a) : (tensor<1x6x6x6xf32>) -> tensor<1x6x3x3xf32>
  %w1 = arith.constant dense<"0x000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE"> : tensor<4x6x1x1xf32>
  %c = call @kernel_2_conv(%p, %w1) : (tensor<1x6x3x3xf32>, tensor<4x6x1x1xf32>) -> tensor<1x4x3x3xf32>
  return %c : tensor<1x4x3x3xf32>
}
func.func private @kernel_0_conv(%x: tensor<1x6x6x6xf32>, %w: tensor<6x6x3x3xf32>) -> tensor<1x6x6x6xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x6xf32> to tensor<1x6x8x8xf32>
  %e = tensor.empty() : tensor<1x6x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x6x8x8xf32>, tensor<6x6x3x3xf32>) outs(%f : tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  return %c : tensor<1x6x6x6xf32>
}
func.func private @kernel_1_max_pool(%x: tensor<1x6x6x6xf32>) -> tensor<1x6x3x3xf32> attributes {dnnf.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x6x6x6xf32> to tensor<1x6x8x8xf32>
  %e = tensor.empty() : tensor<1x6x3x3xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %m = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %k : tensor<1x6x8x8xf32>, tensor<3x3xf32>) outs(%f : tensor<1x6x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %m : tensor<1x6x3x3xf32>
}
func.func private @kernel_2_conv(%x: tensor<1x6x3x3xf32>, %w: tensor<4x6x1x1xf32>) -> tensor<1x4x3x3xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x3x3xf32>, tensor<4x6x1x1xf32>) outs(%f : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %c : tensor<1x4x3x3xf32>
}

// -----

// Concatenations along channels: 8 then 6 channels concatenate blocked (the partial
// block last) with a relu, no NCHW copy; 6 then 8 would shift the second input's
// channels within its blocks, so that kernel stays NCHW and reads copies.
// CHECK-LABEL: func.func @concatenations(
// CHECK:         %[[A:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x5x5xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[A_NCHW:.*]] = call @kernel_nc4hw4_to_nchw_1x8x5x5(%[[A]])
// CHECK:         %[[B:.*]] = call @kernel_1_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x5x5xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[B_NCHW:.*]] = call @kernel_nc4hw4_to_nchw_1x6x5x5(%[[B]])
// CHECK-NEXT:    %[[K:.*]] = call @kernel_2_concat_relu(%[[A]], %[[B]]) : (tensor<1x2x5x5x4xf32>, tensor<1x2x5x5x4xf32>) -> tensor<1x4x5x5x4xf32>
// CHECK-NEXT:    %[[K_NCHW:.*]] = call @kernel_nc4hw4_to_nchw_1x14x5x5(%[[K]])
// CHECK-NEXT:    %[[S:.*]] = call @kernel_3_concat(%[[B_NCHW]], %[[A_NCHW]]) : (tensor<1x6x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x14x5x5xf32>
// CHECK-NEXT:    return %[[K_NCHW]], %[[S]]
// CHECK-LABEL: func.func private @kernel_2_concat_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x5x5x4xf32>, %[[Y:.*]]: tensor<1x2x5x5x4xf32>) -> tensor<1x4x5x5x4xf32>
// CHECK:         %[[C:.*]] = tensor.concat dim(1) %[[X]], %[[Y]] : (tensor<1x2x5x5x4xf32>, tensor<1x2x5x5x4xf32>) -> tensor<1x4x5x5x4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : tensor<1x4x5x5x4xf32>)
// CHECK-LABEL: func.func private @kernel_3_concat(
// CHECK:         tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<1x6x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x14x5x5xf32>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @concatenations(%x: tensor<1x4x5x5xf32>) -> (tensor<1x14x5x5xf32>, tensor<1x14x5x5xf32>) {
  %w0 = arith.constant dense<"0x0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF"> : tensor<8x4x3x3xf32>
  %a = call @kernel_0_conv(%x, %w0) : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
  %w1 = arith.constant dense<"0x000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F0000403F000040BF000000BF000080BE000000000000803E0000003F"> : tensor<6x4x3x3xf32>
  %b = call @kernel_1_conv(%x, %w1) : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32>
  %k = call @kernel_2_concat_relu(%a, %b) : (tensor<1x8x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x14x5x5xf32>
  %s = call @kernel_3_concat(%b, %a) : (tensor<1x6x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x14x5x5xf32>
  return %k, %s : tensor<1x14x5x5xf32>, tensor<1x14x5x5xf32>
}
func.func private @kernel_0_conv(%x: tensor<1x4x5x5xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x5x5xf32> to tensor<1x4x7x7xf32>
  %e = tensor.empty() : tensor<1x8x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  return %c : tensor<1x8x5x5xf32>
}
func.func private @kernel_1_conv(%x: tensor<1x4x5x5xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x5x5xf32> to tensor<1x4x7x7xf32>
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x7x7xf32>, tensor<6x4x3x3xf32>) outs(%f : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  return %c : tensor<1x6x5x5xf32>
}
func.func private @kernel_2_concat_relu(%a: tensor<1x8x5x5xf32>, %b: tensor<1x6x5x5xf32>) -> tensor<1x14x5x5xf32> attributes {dnnf.kernel} {
  %c = tensor.concat dim(1) %a, %b : (tensor<1x8x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x14x5x5xf32>
  %e = tensor.empty() : tensor<1x14x5x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x14x5x5xf32>) outs(%e : tensor<1x14x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x14x5x5xf32>
  return %r : tensor<1x14x5x5xf32>
}
func.func private @kernel_3_concat(%b: tensor<1x6x5x5xf32>, %a: tensor<1x8x5x5xf32>) -> tensor<1x14x5x5xf32> attributes {dnnf.kernel} {
  %c = tensor.concat dim(1) %b, %a : (tensor<1x6x5x5xf32>, tensor<1x8x5x5xf32>) -> tensor<1x14x5x5xf32>
  return %c : tensor<1x14x5x5xf32>
}

// -----

// A convolution whose result is sliced along channels into several results (merged 1x1
// convolutions, as Inception's branches are): each slice starting at a block is taken
// from the blocked value, the results blocked; a global average pooling of one reads it
// blocked and flattens [N, C/4, 4] to [N, C] itself: the only NCHW copy is the other
// result's.
// CHECK-DAG:   #[[REDUCE_IN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4, d2)>
// CHECK-LABEL: func.func @slices_and_global_pooling(
// CHECK:         %[[R:.*]]:2 = call @kernel_0_conv_slice(%{{.*}}, %{{.*}}) : (tensor<1x4x5x5xf32>, tensor<3x1x3x3x4x4xf32>) -> (tensor<1x2x5x5x4xf32>, tensor<1x1x5x5x4xf32>)
// CHECK-NEXT:    %[[Y:.*]] = call @kernel_nc4hw4_to_nchw_1x8x5x5(%[[R]]#0)
// CHECK-NEXT:    %[[G:.*]] = call @kernel_1_global_average_pool(%[[R]]#1) : (tensor<1x1x5x5x4xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    return %[[Y]], %[[G]]
// CHECK-LABEL: func.func private @kernel_0_conv_slice(
// CHECK:         %[[C:.*]] = linalg.generic
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[C]][0, 0, 0, 0, 0] [1, 2, 5, 5, 4] [1, 1, 1, 1, 1] : tensor<1x3x5x5x4xf32> to tensor<1x2x5x5x4xf32>
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[C]][0, 2, 0, 0, 0] [1, 1, 5, 5, 4] [1, 1, 1, 1, 1] : tensor<1x3x5x5x4xf32> to tensor<1x1x5x5x4xf32>
// CHECK:         return %[[S0]], %[[S1]]
// CHECK-LABEL: func.func private @kernel_1_global_average_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x5x5x4xf32>) -> tensor<1x3xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[REDUCE_IN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<1x1x5x5x4xf32>) outs(%{{.*}} : tensor<1x1x4xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[SUM]] {{\[\[}}0], [1, 2]] : tensor<1x1x4xf32> into tensor<1x4xf32>
// CHECK:         %[[NC:.*]] = tensor.extract_slice %[[FLAT]][0, 0] [1, 3] [1, 1] : tensor<1x4xf32> to tensor<1x3xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[NC]] : tensor<1x3xf32>)
// CHECK:           arith.divf
func.func @slices_and_global_pooling(%x: tensor<1x4x5x5xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x3xf32>) {
  %w = arith.constant dense<"0x0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF00000000"> : tensor<11x4x3x3xf32>
  %s:2 = call @kernel_0_conv_slice(%x, %w) : (tensor<1x4x5x5xf32>, tensor<11x4x3x3xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x3x5x5xf32>)
  %g = call @kernel_1_global_average_pool(%s#1) : (tensor<1x3x5x5xf32>) -> tensor<1x3xf32>
  return %s#0, %g : tensor<1x8x5x5xf32>, tensor<1x3xf32>
}
func.func private @kernel_0_conv_slice(%x: tensor<1x4x5x5xf32>, %w: tensor<11x4x3x3xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x3x5x5xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x5x5xf32> to tensor<1x4x7x7xf32>
  %e = tensor.empty() : tensor<1x11x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x11x5x5xf32>) -> tensor<1x11x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x7x7xf32>, tensor<11x4x3x3xf32>) outs(%f : tensor<1x11x5x5xf32>) -> tensor<1x11x5x5xf32>
  %s0 = tensor.extract_slice %c[0, 0, 0, 0] [1, 8, 5, 5] [1, 1, 1, 1] : tensor<1x11x5x5xf32> to tensor<1x8x5x5xf32>
  %s1 = tensor.extract_slice %c[0, 8, 0, 0] [1, 3, 5, 5] [1, 1, 1, 1] : tensor<1x11x5x5xf32> to tensor<1x3x5x5xf32>
  return %s0, %s1 : tensor<1x8x5x5xf32>, tensor<1x3x5x5xf32>
}
func.func private @kernel_1_global_average_pool(%x: tensor<1x3x5x5xf32>) -> tensor<1x3xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %r = linalg.reduce ins(%x : tensor<1x3x5x5xf32>) outs(%f : tensor<1x3xf32>) dimensions = [2, 3]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<1x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<1x3xf32>) outs(%e2 : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.constant 25.0 : f32
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<1x3xf32>
  return %m : tensor<1x3xf32>
}

// -----

// Per-channel divisions: a batch normalization's scale / sqrt(var + eps), made of
// per-channel constants only, computes blocked (the constants past C repeat channel
// C - 1's: [4, 5, 5, 5]); a division by the activation itself could make an infinity
// past C, so that kernel stays NCHW on a copy.
// CHECK-LABEL: func.func @divisions(
// CHECK:         %[[A:.*]] = call @kernel_0_conv(%{{.*}}, %{{.*}}) : (tensor<1x4x5x5xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK-NEXT:    %[[A_NCHW:.*]] = call @kernel_nc4hw4_to_nchw_1x6x5x5(%[[A]])
// CHECK:         %[[VAR:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [4.000000e+00, 5.000000e+00, 5.000000e+00, 5.000000e+00]]> : tensor<2x4xf32>
// CHECK-NEXT:    %[[N:.*]] = call @kernel_1_normalization(%[[A]], %{{.*}}, %[[VAR]]) : (tensor<1x2x5x5x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x5x5x4xf32>
// CHECK:         call @kernel_2_reciprocal(%[[A_NCHW]]) : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
// CHECK-LABEL: func.func private @kernel_1_normalization(
// CHECK:         math.sqrt
// CHECK:         arith.divf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @divisions(%x: tensor<1x4x5x5xf32>) -> (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) {
  %w = arith.constant dense<"0x0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F0000C03F0000C0BF000080BF000000BF000000000000003F0000803F"> : tensor<6x4x3x3xf32>
  %a = call @kernel_0_conv(%x, %w) : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32>
  %scale = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 3.0, 5.0]> : tensor<6xf32>
  %var = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 4.0, 5.0]> : tensor<6xf32>
  %n = call @kernel_1_normalization(%a, %scale, %var) : (tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  %r = call @kernel_2_reciprocal(%a) : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  return %n, %r : tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>
}
func.func private @kernel_0_conv(%x: tensor<1x4x5x5xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x5x5xf32> to tensor<1x4x7x7xf32>
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x7x7xf32>, tensor<6x4x3x3xf32>) outs(%f : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  return %c : tensor<1x6x5x5xf32>
}
func.func private @kernel_1_normalization(%a: tensor<1x6x5x5xf32>, %scale: tensor<6xf32>, %var: tensor<6xf32>) -> tensor<1x6x5x5xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %n = linalg.generic {indexing_maps = [#id, #channel, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %scale, %var : tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<1x6x5x5xf32>) {
  ^bb0(%in: f32, %s: f32, %v: f32, %out: f32):
    %eps = arith.constant 1.0e-5 : f32
    %ve = arith.addf %v, %eps : f32
    %root = math.sqrt %ve : f32
    %k = arith.divf %s, %root : f32
    %y = arith.mulf %in, %k : f32
    linalg.yield %y : f32
  } -> tensor<1x6x5x5xf32>
  return %n : tensor<1x6x5x5xf32>
}
func.func private @kernel_2_reciprocal(%a: tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x6x5x5xf32>) outs(%e : tensor<1x6x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %y = arith.divf %one, %in : f32
    linalg.yield %y : f32
  } -> tensor<1x6x5x5xf32>
  return %r : tensor<1x6x5x5xf32>
}
