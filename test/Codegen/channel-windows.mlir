// A LRN's sum of squares over its window of channels (codegen/cpu/channel_windows.py):
// the reduction generic over (n, c, h, w, k) -> (n, c + k, h, w) becomes one element-wise
// generic over the window's taps, slices of the padded tensor at channels k .. k + C,
// added in order; the zero pad becomes a tensor whose margin channels only are filled.
// Where the padded tensor is the squares of a value, the value is padded instead, its
// producer writing it in place between the margins (its other readers read it there),
// and the taps are squared in the sum, the LRN's division computed in the same generic.
// A pad of an argument (no producer to write in
// place) is copied in; a pad with another value than zero is no LRN's and keeps its
// reduction.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// ReLU + LRN (size 5): the ReLU written into channels 2 .. 10 of the padded tensor, the
// division reading it there (X: the same slice as tap 2), in the generic of the sum.
// CHECK-LABEL: func.func @relu_in_place(
// CHECK-NOT:     tensor.pad
// CHECK:         %[[PADDED:.*]] = tensor.empty() : tensor<1x12x6x6xf32>
// CHECK:         %[[INTERIOR:.*]] = tensor.extract_slice %[[PADDED]][0, 2, 0, 0] [1, 8, 6, 6] [1, 1, 1, 1]
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[INTERIOR]]
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[FLAT]] : tensor<{{.*}}>)
// CHECK:           arith.maximumf
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[RELU]]
// CHECK:         %[[P0:.*]] = tensor.insert_slice %[[R]] into %[[PADDED]][0, 2, 0, 0] [1, 8, 6, 6]
// CHECK:         %[[LOW:.*]] = tensor.extract_slice %[[P0]][0, 0, 0, 0] [1, 2, 6, 6]
// CHECK:         %[[ZL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[LOW]] : tensor<1x2x6x6xf32>)
// CHECK:         %[[P1:.*]] = tensor.insert_slice %[[ZL]] into %[[P0]][0, 0, 0, 0] [1, 2, 6, 6]
// CHECK:         %[[HIGH:.*]] = tensor.extract_slice %[[P1]][0, 10, 0, 0] [1, 2, 6, 6]
// CHECK:         %[[ZH:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[HIGH]] : tensor<1x2x6x6xf32>)
// CHECK:         %[[P2:.*]] = tensor.insert_slice %[[ZH]] into %[[P1]][0, 10, 0, 0] [1, 2, 6, 6]
// CHECK-DAG:     tensor.extract_slice %[[P2]][0, 2, 0, 0] [1, 8, 6, 6] [1, 1, 1, 1]
// CHECK-DAG:     tensor.extract_slice %[[P2]][0, 0, 0, 0] [1, 8, 6, 6] [1, 1, 1, 1]
// CHECK-DAG:     tensor.extract_slice %[[P2]][0, 4, 0, 0] [1, 8, 6, 6] [1, 1, 1, 1]
// CHECK:         linalg.generic {{.*}} iterator_types = [{{.*}}]
// CHECK-NEXT:    ^bb0(%[[T0:[^:]*]]: f32, %[[T1:[^:]*]]: f32, %[[T2:[^:]*]]: f32, %[[T3:[^:]*]]: f32, %[[T4:[^:]*]]: f32, %[[X:[^:]*]]: f32, %{{[^:]*}}: f32):
// CHECK-NEXT:      %[[S0:.*]] = arith.mulf %[[T0]], %[[T0]] : f32
// CHECK-NEXT:      %[[S1:.*]] = arith.mulf %[[T1]], %[[T1]] : f32
// CHECK-NEXT:      %[[A1:.*]] = arith.addf %[[S0]], %[[S1]] : f32
// CHECK-NEXT:      %[[S2:.*]] = arith.mulf %[[T2]], %[[T2]] : f32
// CHECK-NEXT:      %[[A2:.*]] = arith.addf %[[A1]], %[[S2]] : f32
// CHECK-NEXT:      %[[S3:.*]] = arith.mulf %[[T3]], %[[T3]] : f32
// CHECK-NEXT:      %[[A3:.*]] = arith.addf %[[A2]], %[[S3]] : f32
// CHECK-NEXT:      %[[S4:.*]] = arith.mulf %[[T4]], %[[T4]] : f32
// CHECK-NEXT:      %[[A4:.*]] = arith.addf %[[A3]], %[[S4]] : f32
// CHECK:           arith.divf %[[X]], %{{.*}} : f32
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     "reduction"
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#window = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
#tap = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @relu_in_place(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<1x8x6x6xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x6x6xf32>) outs(%e0 : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x6x6xf32>
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %sq = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<1x8x6x6xf32>) outs(%e : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x8x6x6xf32>
  %padded = tensor.pad %sq low[0, 2, 0, 0] high[0, 2, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x6x6xf32> to tensor<1x12x6x6xf32>
  %w = tensor.empty() : tensor<5xf32>
  %e2 = tensor.empty() : tensor<1x8x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %s = linalg.generic {indexing_maps = [#window, #tap, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%padded, %w : tensor<1x12x6x6xf32>, tensor<5xf32>) outs(%f : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %t: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x8x6x6xf32>
  %e3 = tensor.empty() : tensor<1x8x6x6xf32>
  %y = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) outs(%e3 : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %sum: f32, %o: f32):
    %c = arith.constant 6.000000e-01 : f32
    %p = math.powf %sum, %c : f32
    %d = arith.divf %in, %p : f32
    linalg.yield %d : f32
  } -> tensor<1x8x6x6xf32>
  return %y : tensor<1x8x6x6xf32>
}

// -----

// An even window (size 4: one channel before, two after) of the argument's channels:
// the argument copied between the margins.
// CHECK-LABEL: func.func @argument_copied(
// CHECK-NOT:     tensor.pad
// CHECK:         %[[PADDED:.*]] = tensor.empty() : tensor<1x6x2x5xf32>
// CHECK:         %[[P0:.*]] = tensor.insert_slice %arg0 into %[[PADDED]][0, 1, 0, 0] [1, 3, 2, 5]
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x2x5xf32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x2x5xf32>)
// CHECK-COUNT-4: tensor.extract_slice %{{.*}}[0, {{[0-3]}}, 0, 0] [1, 3, 2, 5] [1, 1, 1, 1]
// CHECK:         linalg.generic
// CHECK-COUNT-3:   arith.addf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     "reduction"
#window = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
#tap = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @argument_copied(%x: tensor<1x3x2x5xf32>) -> tensor<1x3x2x5xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 0, 0] high[0, 2, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x2x5xf32> to tensor<1x6x2x5xf32>
  %w = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<1x3x2x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x5xf32>) -> tensor<1x3x2x5xf32>
  %s = linalg.generic {indexing_maps = [#window, #tap, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%padded, %w : tensor<1x6x2x5xf32>, tensor<4xf32>) outs(%f : tensor<1x3x2x5xf32>) {
  ^bb0(%in: f32, %t: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x3x2x5xf32>
  return %s : tensor<1x3x2x5xf32>
}

// -----

// Padded with one: no LRN's window; the reduction stays.
// CHECK-LABEL: func.func @not_zero_padded(
// CHECK:         tensor.pad
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
#window = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
#tap = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @not_zero_padded(%x: tensor<1x3x2x5xf32>) -> tensor<1x3x2x5xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 0, 0] high[0, 1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x3x2x5xf32> to tensor<1x5x2x5xf32>
  %w = tensor.empty() : tensor<3xf32>
  %e = tensor.empty() : tensor<1x3x2x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2x5xf32>) -> tensor<1x3x2x5xf32>
  %s = linalg.generic {indexing_maps = [#window, #tap, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%padded, %w : tensor<1x5x2x5xf32>, tensor<3xf32>) outs(%f : tensor<1x3x2x5xf32>) {
  ^bb0(%in: f32, %t: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<1x3x2x5xf32>
  return %s : tensor<1x3x2x5xf32>
}
