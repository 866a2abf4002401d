// Convolutions of one function share their accumulator init (one linalg.fill after
// CSE) and, when they read one input with one window, the im2col patches of the
// narrow ones (output rows narrower than a vector: matmuls over [C*KH*KW, OH*OW]).
// Nothing of a convolution that is rewritten is changed in place: the other users keep
// the init, and after bufferization each matmul (16 whole columns of 25, the partial
// tile of 9 peeled off) reads the patches it was given, and writes its result where it
// belongs (no copy: codegen/cpu/loop_inits.py). Here @narrow_convs_share_patches's patches of %y are written into the
// tensor.empty that the patches of %x (read again by the third convolution) were
// written into; they must get a buffer of their own (codegen/cpu/buffer_reads.py).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s --check-prefix=PREP
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v4 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=cpu=x86-64-v4 | FileCheck %s

// PREP-LABEL: func.func @narrow_convs_share_patches(
// PREP-SAME:    %[[X:[^:]*]]: tensor<1x8x7x7xf32>, %[[Y:[^:]*]]: tensor<1x8x7x7xf32>
// PREP:         %[[E:.*]] = tensor.empty() : tensor<8x3x3x5x5xf32>
// PREP:         %[[PX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x8x7x7xf32>) outs(%[[E]] : tensor<8x3x3x5x5xf32>)
// PREP:         %[[CX:.*]] = tensor.collapse_shape %[[PX]]
// PREP:         %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<16x25xf32>
// PREP:         linalg.matmul ins(%{{.*}}, %[[CX]] : tensor<16x72xf32>, tensor<72x25xf32>) outs(%[[INIT]] : tensor<16x25xf32>)
// PREP:         %[[PY:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<1x8x7x7xf32>) outs(%[[E]] : tensor<8x3x3x5x5xf32>)
// PREP:         %[[CY:.*]] = tensor.collapse_shape %[[PY]]
// PREP:         linalg.matmul ins(%{{.*}}, %[[CY]] : tensor<16x72xf32>, tensor<72x25xf32>) outs(%[[INIT]] : tensor<16x25xf32>)
// PREP:         linalg.matmul ins(%{{.*}}, %[[CX]] : tensor<16x72xf32>, tensor<72x25xf32>) outs(%[[INIT]] : tensor<16x25xf32>)
// PREP-NOT:     linalg.conv_2d

// CHECK-LABEL: func.func @narrow_convs_share_patches(
// CHECK:         %[[BX:.*]] = memref.collapse_shape %[[PX:[^ ]*]] {{\[}}[0, 1, 2], [3, 4]] : memref<8x3x3x5x5xf32> into memref<72x25xf32>
// CHECK-NOT:     linalg.copy
// CHECK:         %[[X16:.*]] = memref.subview %[[BX]][0, 0] [72, 16]
// CHECK-NOT:     linalg.copy
// CHECK:         %[[X9:.*]] = memref.subview %[[BX]][0, 16] [72, 9]
// CHECK-NOT:     memref.subview %[[PX]][
// CHECK-NOT:     linalg.copy
// CHECK:         %[[BY:.*]] = memref.collapse_shape %{{[^ ]*}} {{\[}}[0, 1, 2], [3, 4]] : memref<8x3x3x5x5xf32> into memref<72x25xf32>
// CHECK-NOT:     linalg.copy
// CHECK:         memref.subview %[[BY]][0, 0] [72, 16]
// CHECK-NOT:     linalg.copy
// CHECK:         memref.subview %[[BY]][0, 16] [72, 9]
// CHECK-NOT:     linalg.copy
// CHECK:         memref.subview %[[X16]][
// CHECK-NOT:     linalg.copy
// CHECK:         memref.subview %[[X9]][
// CHECK-NOT:     linalg.copy
func.func @narrow_convs_share_patches(%x: tensor<1x8x7x7xf32>, %y: tensor<1x8x7x7xf32>, %w1: tensor<16x8x3x3xf32>,
                                      %w2: tensor<16x8x3x3xf32>, %w3: tensor<16x8x3x3xf32>)
    -> (tensor<1x16x5x5xf32>, tensor<1x16x5x5xf32>, tensor<1x16x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x5x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w1 : tensor<1x8x7x7xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%y, %w2 : tensor<1x8x7x7xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w3 : tensor<1x8x7x7xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  return %a, %b, %c : tensor<1x16x5x5xf32>, tensor<1x16x5x5xf32>, tensor<1x16x5x5xf32>
}

// -----

// A 1x1 convolution (a matmul) and a direct 3x3 one over 32 columns (whole
// register tiles: rows, not flat rows) share one init:
// the matmul gets a fill of its own shape, the 3x3 convolution keeps the shared one.
// PREP-LABEL: func.func @conv1x1_shares_init_with_direct(
// PREP:         %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<1x16x16x32xf32>
// PREP:         %[[MINIT:.*]] = linalg.fill {{.*}} -> tensor<16x512xf32>
// PREP:         linalg.matmul {{.*}} outs(%[[MINIT]] : tensor<16x512xf32>)
// PREP:         linalg.conv_2d_nchw_fchw {{.*}} outs(%[[FILL]] : tensor<1x16x16x32xf32>)
// CHECK-LABEL: func.func @conv1x1_shares_init_with_direct(
func.func @conv1x1_shares_init_with_direct(%x: tensor<1x8x18x34xf32>, %w1: tensor<16x8x1x1xf32>, %w3: tensor<16x8x3x3xf32>)
    -> (tensor<1x16x16x32xf32>, tensor<1x16x16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %xs = tensor.extract_slice %x[0, 0, 1, 1] [1, 8, 16, 32] [1, 1, 1, 1] : tensor<1x8x18x34xf32> to tensor<1x8x16x32xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%xs, %w1 : tensor<1x8x16x32xf32>, tensor<16x8x1x1xf32>) outs(%init : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w3 : tensor<1x8x18x34xf32>, tensor<16x8x3x3xf32>) outs(%init : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  return %a, %b : tensor<1x16x16x32xf32>, tensor<1x16x16x32xf32>
}
