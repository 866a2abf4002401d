// A concatenation's pieces computed in place in its result (codegen/cpu/concat_pieces.py):
// each op computing a piece into an empty tensor writes its slice of one new tensor
// (through the reshape of a collapsed epilogue), the pieces are inserted back where
// they were computed; a piece that is an argument is inserted (copied) at the end.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s

// SqueezeNet's fire module: relu(conv1x1(s) + b) beside relu(e).
// CHECK-LABEL: func.func @fire_module(
// CHECK-NOT:     tensor.concat
// CHECK:         linalg.matmul
// CHECK:         %[[DEST:.*]] = bufferization.alloc_tensor() : tensor<1x128x55x55xf32>
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[DEST]][0, 0, 0, 0] [1, 64, 55, 55]
// CHECK:         %[[C0:.*]] = tensor.collapse_shape %[[S0]] {{\[\[}}0, 1], [2, 3]]
// CHECK:         %[[E0:.*]] = linalg.generic {{.*}} outs(%[[C0]] : tensor<64x3025xf32>)
// CHECK:         %[[X0:.*]] = tensor.expand_shape %[[E0]]
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[X0]] into %[[DEST]][0, 0, 0, 0] [1, 64, 55, 55]
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[I0]][0, 64, 0, 0] [1, 64, 55, 55]
// CHECK:         %[[C1:.*]] = tensor.collapse_shape %[[S1]]
// CHECK:         %[[E1:.*]] = linalg.generic {{.*}} outs(%[[C1]] : tensor<1x64x3025xf32>)
// CHECK:         %[[X1:.*]] = tensor.expand_shape %[[E1]]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[X1]] into %[[I0]][0, 64, 0, 0] [1, 64, 55, 55]
// CHECK:         return %[[I1]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @fire_module(%arg0: tensor<1x16x55x55xf32>, %arg1: tensor<64x16x1x1xf32>, %arg2: tensor<64xf32>, %arg3: tensor<1x64x55x55xf32>) -> tensor<1x128x55x55xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x64x55x55xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x64x55x55xf32>) -> tensor<1x64x55x55xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<1x16x55x55xf32>, tensor<64x16x1x1xf32>) outs(%1 : tensor<1x64x55x55xf32>) -> tensor<1x64x55x55xf32>
  %expanded = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [64, 1, 1] : tensor<64xf32> into tensor<64x1x1xf32>
  %3 = tensor.empty() : tensor<1x64x55x55xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %expanded : tensor<1x64x55x55xf32>, tensor<64x1x1xf32>) outs(%3 : tensor<1x64x55x55xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %9 = arith.addf %in, %in_0 : f32
    %10 = arith.maximumf %9, %cst : f32
    linalg.yield %10 : f32
  } -> tensor<1x64x55x55xf32>
  %5 = tensor.empty() : tensor<1x64x55x55xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3 : tensor<1x64x55x55xf32>) outs(%5 : tensor<1x64x55x55xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.maximumf %in, %cst : f32
    linalg.yield %9 : f32
  } -> tensor<1x64x55x55xf32>
  %concat = tensor.concat dim(1) %4, %6 : (tensor<1x64x55x55xf32>, tensor<1x64x55x55xf32>) -> tensor<1x128x55x55xf32>
  return %concat : tensor<1x128x55x55xf32>
}

// -----

// A piece that is an argument is inserted after the computed ones, at its offset.
// CHECK-LABEL: func.func @argument_piece(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<1x8x16x16xf32>, %[[B:[^:]*]]: tensor<1x3x16x16xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         %[[DEST:.*]] = bufferization.alloc_tensor() : tensor<1x11x16x16xf32>
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[DEST]][0, 3, 0, 0] [1, 8, 16, 16]
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[A]]
// CHECK-SAME:        outs(%[[S]] : tensor<1x8x16x16xf32>)
// CHECK:         %[[I:.*]] = tensor.insert_slice %{{.*}} into %[[DEST]][0, 3, 0, 0] [1, 8, 16, 16]
// CHECK:         %[[J:.*]] = tensor.insert_slice %[[B]] into %[[I]][0, 0, 0, 0] [1, 3, 16, 16]
// CHECK:         return %[[J]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @argument_piece(%arg0: tensor<1x8x16x16xf32>, %arg1: tensor<1x3x16x16xf32>) -> tensor<1x11x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x8x16x16xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x16x16xf32>) outs(%0 : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.maximumf %in, %cst : f32
    linalg.yield %2 : f32
  } -> tensor<1x8x16x16xf32>
  %concat = tensor.concat dim(1) %arg1, %1 : (tensor<1x3x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x11x16x16xf32>
  return %concat : tensor<1x11x16x16xf32>
}

// -----

// Only arguments: nothing to compute in place, the concat stays.
// CHECK-LABEL: func.func @arguments_only(
// CHECK:         tensor.concat dim(1)
// CHECK-NOT:     bufferization.alloc_tensor
func.func @arguments_only(%arg0: tensor<1x8x16x16xf32>, %arg1: tensor<1x3x16x16xf32>) -> tensor<1x11x16x16xf32> {
  %concat = tensor.concat dim(1) %arg1, %arg0 : (tensor<1x3x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x11x16x16xf32>
  return %concat : tensor<1x11x16x16xf32>
}

// -----

// A generic that reads its init (accumulates into it) is no piece to compute in place:
// inserted (copied) as the concat did.
// CHECK-LABEL: func.func @accumulating_piece(
// CHECK:         %[[ACC:.*]] = linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<1x8x16x16xf32>)
// CHECK:           arith.addf %in, %out
// CHECK:         %[[DEST:.*]] = bufferization.alloc_tensor() : tensor<1x16x16x16xf32>
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[DEST]][0, 8, 0, 0] [1, 8, 16, 16]
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%[[S]] : tensor<1x8x16x16xf32>)
// CHECK:         %[[I:.*]] = tensor.insert_slice %{{.*}} into %[[DEST]][0, 8, 0, 0]
// CHECK:         tensor.insert_slice %[[ACC]] into %[[I]][0, 0, 0, 0]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @accumulating_piece(%arg0: tensor<1x8x16x16xf32>, %arg1: tensor<1x8x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x16x16xf32>) outs(%arg1 : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.addf %in, %out : f32
    linalg.yield %2 : f32
  } -> tensor<1x8x16x16xf32>
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x16x16xf32>) outs(%e : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.maximumf %in, %cst : f32
    linalg.yield %2 : f32
  } -> tensor<1x8x16x16xf32>
  %concat = tensor.concat dim(1) %0, %1 : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x16x16x16xf32>
  return %concat : tensor<1x16x16x16xf32>
}
