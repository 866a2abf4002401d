// A kernel's scalar result is computed through a copy into one element, collapsed back
// (codegen/gpu/scalar_results.py): the copy is the root, one thread of one workgroup,
// what it reads fused in. A root of rank 0 had no dim to
// tile, and the kernel was refused (a sum over every axis; an op of two scalars).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// ONNX's ReduceSum without axes.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x5x8xf32>, %[[Y:[a-z0-9]+]]: memref<f32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%[[X]] : memref<3x5x8xf32>, %[[Y]] : memref<f32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(a, b, c) -> (a, b, c)>
#scalar = affine_map<(a, b, c) -> ()>
func.func private @kernel_0(%x: tensor<3x5x8xf32>) -> tensor<f32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction", "reduction"]}
       ins(%x : tensor<3x5x8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

func.func @main(%x: tensor<3x5x8xf32>) -> tensor<f32> {
  %r = call @kernel_0(%x) : (tensor<3x5x8xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Two scalars added.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<f32>, %[[B:[a-z0-9]+]]: memref<f32>, %[[C:[a-z0-9]+]]: memref<f32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[A]] : memref<f32>, %[[B]] : memref<f32>, %[[C]] : memref<f32>) {dnnf.gpu.writes = [false, false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#none = affine_map<() -> ()>
func.func private @kernel_0(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<f32>
  %s = linalg.generic {indexing_maps = [#none, #none, #none], iterator_types = []}
       ins(%a, %b : tensor<f32>, tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %r = call @kernel_0(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
