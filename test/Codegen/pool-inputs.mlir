// Pooling pulled through what makes its input (codegen/cpu/pool_inputs.py): a max pool
// of a channel concat of ReLUs (SqueezeNet's fire modules) becomes one pool per part,
// each reading the part's input (the ReLU moved after the pool, computed on its taps
// in registers: in the second of the pool's two passes, separable_pools.py) and
// writing its channels of the result: no concat, no ReLU pass.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 | FileCheck %s
// CHECK-LABEL: func.func @max_pool_of_relu_concat(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<1x64x55x55xf32>, %[[B:[^:]*]]: tensor<1x64x55x55xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[A]]
// CHECK:           linalg.generic
// CHECK-COUNT-2:     arith.maximumf {{.*}}fastmath<nsz>
// CHECK-NEXT:        linalg.yield
// CHECK:           linalg.generic
// CHECK-COUNT-2:     arith.maximumf {{.*}}fastmath<nsz>
// CHECK-NEXT:        arith.maximumf %{{[0-9]+}}, %cst : f32
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 64, 27, 27]
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[B]]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0, 64, 0, 0] [1, 64, 27, 27]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
  func.func @max_pool_of_relu_concat(%arg0: tensor<1x64x55x55xf32>, %arg1: tensor<1x64x55x55xf32>) -> tensor<1x128x27x27xf32> {
    %0 = tensor.empty() : tensor<1x64x55x55xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x64x55x55xf32>) outs(%0 : tensor<1x64x55x55xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_0 = arith.constant 0.000000e+00 : f32
      %8 = arith.maximumf %in, %cst_0 : f32
      linalg.yield %8 : f32
    } -> tensor<1x64x55x55xf32>
    %2 = tensor.empty() : tensor<1x64x55x55xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<1x64x55x55xf32>) outs(%2 : tensor<1x64x55x55xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_0 = arith.constant 0.000000e+00 : f32
      %8 = arith.maximumf %in, %cst_0 : f32
      linalg.yield %8 : f32
    } -> tensor<1x64x55x55xf32>
    %concat = tensor.concat dim(1) %1, %3 : (tensor<1x64x55x55xf32>, tensor<1x64x55x55xf32>) -> tensor<1x128x55x55xf32>
    %cst = arith.constant 0xFF800000 : f32
    %4 = tensor.empty() : tensor<1x128x27x27xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<1x128x27x27xf32>) -> tensor<1x128x27x27xf32>
    %6 = tensor.empty() : tensor<3x3xf32>
    %7 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%concat, %6 : tensor<1x128x55x55xf32>, tensor<3x3xf32>) outs(%5 : tensor<1x128x27x27xf32>) -> tensor<1x128x27x27xf32>
    return %7 : tensor<1x128x27x27xf32>
  }

// -----

// A NaN-dropping max (maxnumf) does not commute with the pool: of the window [NaN, 5],
// the pool of maxnumf(x, 0) is 5, but maxnumf(pool(x), 0) is 0. It stays before the pool.
// CHECK-LABEL: func.func @max_pool_of_maxnumf(
// CHECK:         linalg.generic
// CHECK:           arith.maxnumf
// CHECK:         scf.forall (
// CHECK-NOT:       arith.maxnumf
// CHECK:         return
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
  func.func @max_pool_of_maxnumf(%arg0: tensor<1x64x55x55xf32>) -> tensor<1x64x27x27xf32> {
    %0 = tensor.empty() : tensor<1x64x55x55xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x64x55x55xf32>) outs(%0 : tensor<1x64x55x55xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_0 = arith.constant 0.000000e+00 : f32
      %8 = arith.maxnumf %in, %cst_0 : f32
      linalg.yield %8 : f32
    } -> tensor<1x64x55x55xf32>
    %cst = arith.constant 0xFF800000 : f32
    %4 = tensor.empty() : tensor<1x64x27x27xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<1x64x27x27xf32>) -> tensor<1x64x27x27xf32>
    %6 = tensor.empty() : tensor<3x3xf32>
    %7 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%1, %6 : tensor<1x64x55x55xf32>, tensor<3x3xf32>) outs(%5 : tensor<1x64x27x27xf32>) -> tensor<1x64x27x27xf32>
    return %7 : tensor<1x64x27x27xf32>
  }
