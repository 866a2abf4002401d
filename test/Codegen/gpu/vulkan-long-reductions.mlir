// Reductions of many elements to few results (codegen/gpu/partial_reductions.py,
// long_reductions.py). Each ran in one thread looping over every element (and lavapipe
// cuts a loop off after 65535 iterations: the sum of [1000, 1000] came out wrong).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan | FileCheck %s

// A sum over every axis of [1000, 1000]: its innermost reduction (1000, cut into
// 1000 parts of 1) is parallel in a first launch, 1000 partial sums over several
// workgroups, each a column's sum; a second launch combines them onto the init.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1000x1000xf32>, %[[SUM:[a-z0-9]+]]: memref<f32>
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK-DAG: %[[GRID:.+]] = arith.constant 5 : index
// CHECK: %[[PARTS:.+]] = memref.alloc() {{.*}} : memref<1x1000xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]],
// CHECK: scf.for {{.*}} -> (vector<4xf32>)
// CHECK: arith.addf {{.*}} : vector<4xf32>
// CHECK: } {dnnf.gpu.phase = 0 : i64}
// CHECK: gpu.launch blocks
// CHECK: scf.for {{.*}} -> (vector<f32>)
// CHECK: arith.addf {{.*}} : f32
// CHECK: } {dnnf.gpu.phase = 1 : i64}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<1000x1000xf32>) -> tensor<f32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
       ins(%x : tensor<1000x1000xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %acc, %a : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

func.func @main(%x: tensor<1000x1000xf32>) -> tensor<f32> {
  %y = call @kernel_0(%x) : (tensor<1000x1000xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// The maximum of two rows of a prime length (100003: no divisor to cut them by): one
// launch, the rows split over the workgroup's 128 threads, each reducing its part of
// both rows into partials in the workgroup's memory from -inf (the neutral element);
// after a barrier the partials are combined onto the init with the same
// NaN-propagating maximumf.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "fused", dnnf.gpu.workgroup_size = 128
// CHECK: gpu.launch
// CHECK: %[[PARTS:.+]] = memref.alloc() : memref<2x128xf32, #spirv.storage_class<Workgroup>>
// CHECK: scf.for
// CHECK: arith.maximumf {{.*}} : vector<2xf32>
// CHECK: gpu.barrier
// CHECK: linalg.reduce ins(%[[PARTS]]
// CHECK: arith.maximumf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<2x100003xf32>) -> tensor<2xf32> attributes {dnnf.kernel} {
  %low = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
       ins(%x : tensor<2x100003xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.maximumf %acc, %a : f32
    linalg.yield %n : f32
  } -> tensor<2xf32>
  return %m : tensor<2xf32>
}

func.func @main(%x: tensor<2x100003xf32>) -> tensor<2xf32> {
  %y = call @kernel_0(%x) : (tensor<2x100003xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// A sum of a prime length past 128 x 65535 (a workgroup's threads would each loop 65537
// times, past lavapipe's budget): 1024 partial sums of the first 8388608 elements (a
// view of the argument, 8192 each), then their combination and, onto it, the 9 left
// (a view of the tail), in the second launch.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8388617xf32>, %[[SUM:[a-z0-9]+]]: memref<f32>
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: %[[HEAD:.+]] = memref.subview %[[X]][0] [8388608] [1]
// CHECK: %[[ROWS:.+]] = memref.expand_shape %[[HEAD]] {{\[\[}}0, 1]] output_shape [8192, 1024]
// CHECK: %[[PARTS:.+]] = memref.alloc() {{.*}} : memref<1x1024xf32>
// CHECK: gpu.launch
// CHECK: memref.subview %[[ROWS]]
// CHECK: scf.for {{.*}} to %c8192 {{.*}} -> (vector<4xf32>)
// CHECK: } {dnnf.gpu.phase = 0 : i64}
// CHECK: %[[TAIL:.+]] = memref.subview %[[X]][8388608] [9] [1]
// CHECK: %[[TAIL0:.+]] = memref.reinterpret_cast %[[TAIL]]
// CHECK: gpu.launch
// CHECK: %[[COMBINED:.+]] = scf.for {{.*}} to %c1024
// CHECK: scf.for {{.*}} to %c9 {{.*}} iter_args({{.*}} = %[[COMBINED]])
// CHECK: memref.subview %[[TAIL0]]
// CHECK: arith.addf
// CHECK: } {dnnf.gpu.phase = 1 : i64}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<8388617xf32>) -> tensor<f32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
       ins(%x : tensor<8388617xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %a, %acc : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

func.func @main(%x: tensor<8388617xf32>) -> tensor<f32> {
  %y = call @kernel_0(%x) : (tensor<8388617xf32>) -> tensor<f32>
  return %y : tensor<f32>
}
