// dnnf-externalize-weights: each large constant of the entry function becomes a trailing
// argument, one per distinct value (same type and bytes: rewrites fold a shared weight
// into a new constant per use); small constants and splats stay in the code. The layout
// of the weights file is recorded on the module.
// Its errors: externalize-weights-invalid.mlir.
// RUN: dnnf-opt %s --dnnf-externalize-weights | FileCheck %s

// Two copies of one 8x8 value are one argument; the transposed value is another; the
// splat and the 4-element constant stay.
// CHECK:       module attributes {dnnf.weights = [
// CHECK-SAME:    \22offset\22: 64, \22dtype\22: \22float32\22, \22shape\22: [8, 8]
// CHECK-SAME:    \22offset\22: 320, \22dtype\22: \22float32\22, \22shape\22: [8, 8]
// CHECK-NOT:     shape
// CHECK-LABEL: func.func @entry(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<8x8xf32> {bufferization.writable = false},
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<8x8xf32> {bufferization.writable = false},
// CHECK-SAME:    %[[WT:[a-z0-9]+]]: tensor<8x8xf32> {bufferization.writable = false})
// CHECK-DAG:     arith.constant dense<1.000000e+00> : tensor<8x8xf32>
// CHECK-DAG:     arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK:         %[[A:.*]] = arith.addf %[[X]], %[[W]]
// CHECK:         %[[B:.*]] = arith.addf %[[A]], %[[W]]
// CHECK:         arith.addf %[[B]], %[[WT]]
module {
  func.func @entry(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4xf32>) {
    %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
      [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0],
      [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0],
      [48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0], [56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]> : tensor<8x8xf32>
    %same = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
      [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0],
      [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0],
      [48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0], [56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]> : tensor<8x8xf32>
    %transposed = arith.constant dense<[[0.0, 8.0, 16.0, 24.0, 32.0, 40.0, 48.0, 56.0], [1.0, 9.0, 17.0, 25.0, 33.0, 41.0, 49.0, 57.0],
      [2.0, 10.0, 18.0, 26.0, 34.0, 42.0, 50.0, 58.0], [3.0, 11.0, 19.0, 27.0, 35.0, 43.0, 51.0, 59.0],
      [4.0, 12.0, 20.0, 28.0, 36.0, 44.0, 52.0, 60.0], [5.0, 13.0, 21.0, 29.0, 37.0, 45.0, 53.0, 61.0],
      [6.0, 14.0, 22.0, 30.0, 38.0, 46.0, 54.0, 62.0], [7.0, 15.0, 23.0, 31.0, 39.0, 47.0, 55.0, 63.0]]> : tensor<8x8xf32>
    %ones = arith.constant dense<1.0> : tensor<8x8xf32>
    %small = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %a = arith.addf %x, %w : tensor<8x8xf32>
    %b = arith.addf %a, %same : tensor<8x8xf32>
    %c = arith.addf %b, %transposed : tensor<8x8xf32>
    %d = arith.addf %c, %ones : tensor<8x8xf32>
    return %d, %small : tensor<8x8xf32>, tensor<4xf32>
  }
}
