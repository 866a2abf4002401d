// An op of a 0-d result (codegen/gpu/scalar_results.py): the sum of a vector's
// magnitudes (ONNX ReduceL1 over its one axis) and its accumulator's fill. A root is
// tiled over workgroups along its result's dims; with none, there was no loop to map
// (`tile_using_forall` with no tile sizes is rejected) and no schedule applied
// (`neither its fused schedule nor one dispatch per op applies`). Each op computes one
// element of a one-dimensional result instead, over a parallel loop of one iteration,
// and the kernel returns it collapsed to 0-d.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<33xf32>, %[[SUM:[a-z0-9]+]]: memref<f32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: %[[ONE:.+]] = memref.expand_shape %[[SUM]] [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: gpu.launch
// CHECK: memref.subview %[[ONE]]
// CHECK: math.absf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<33xf32>) -> tensor<f32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
       ins(%x : tensor<33xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = math.absf %a : f32
    %n = arith.addf %acc, %m : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

func.func @main(%x: tensor<33xf32>) -> tensor<f32> {
  %y = call @kernel_0(%x) : (tensor<33xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// The 0-d maximum read by an op over the whole tensor (ONNX ReduceLogSumExp's x - max):
// the reader reads element 0 of the one-element maximum, not a 0-d reshape of it (which
// the rewrites of reshapes after this one mishandled: the pipeline then crashed). One
// launch: the maximum staged in the workgroup's memory, then read by every thread.
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch
// CHECK: memref.alloc() : memref<1xf32, #spirv.storage_class<Workgroup>>
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: arith.subf
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @kernel_0(%x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> attributes {dnnf.kernel} {
  %low = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
       ins(%x : tensor<3x4x7xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.maximumf %a, %acc : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<3x4x7xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> ()>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x, %m : tensor<3x4x7xf32>, tensor<f32>) outs(%e1 : tensor<3x4x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x4x7xf32>
  return %d : tensor<3x4x7xf32>
}

func.func @main(%x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> {
  %y = call @kernel_0(%x) : (tensor<3x4x7xf32>) -> tensor<3x4x7xf32>
  return %y : tensor<3x4x7xf32>
}
