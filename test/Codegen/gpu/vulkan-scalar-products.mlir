// A contraction to a scalar (ONNX's ReduceSumSquare over all axes: a sum of x * x)
// with an epilogue (times 0.5, into [1, 1, 1]) is tiled as a reduction: its product
// has neither rows nor columns for a matmul's tile (``epilogue_dims.product_dims``).
// Before, finding them raised an IndexError out of the compiler.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x5x8xf32>, %[[Y:[a-z0-9]+]]: memref<1x1x1xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[X]] : memref<3x5x8xf32>, %[[Y]] : memref<1x1x1xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(a, b, c) -> (a, b, c)>
#scalar = affine_map<(a, b, c) -> ()>
func.func private @kernel_0(%x: tensor<3x5x8xf32>) -> tensor<1x1x1xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %es = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction", "reduction"]}
       ins(%x, %x : tensor<3x5x8xf32>, tensor<3x5x8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<1x1x1xf32>
  %y = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%s : tensor<f32>) outs(%e : tensor<1x1x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %half : f32
    linalg.yield %r : f32
  } -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}

func.func @main(%x: tensor<3x5x8xf32>) -> tensor<1x1x1xf32> {
  %r = call @kernel_0(%x) : (tensor<3x5x8xf32>) -> tensor<1x1x1xf32>
  return %r : tensor<1x1x1xf32>
}
