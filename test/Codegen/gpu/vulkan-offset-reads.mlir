// A reader of part of an element-wise value, at an offset (codegen/gpu/offset_reads.py):
// the sum of rows 16 to 63 of a residual sum that the kernel also returns. The slice's
// offset is a constant term of the reader's map; fused into the reader's tiles, the sum
// was computed over a span per thread as long as the offset, in a private array (20
// floats a thread here, 33 for each needed on Swin's shifted rows). Computed in the
// reader's body instead, the reader reads both inputs at the offset: no private array.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func @kernel_0_kernel::@kernel_0_kernel
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: gpu.func @kernel_0_kernel(
// CHECK-NOT: memref.alloca
// CHECK: gpu.return
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#row = affine_map<(b, t, c) -> (b, t)>
func.func private @kernel_0(%x: tensor<1x64x32xf32>, %r: tensor<1x64x32xf32>) -> (tensor<1x64x32xf32>, tensor<1x48xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x32xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%x, %r : tensor<1x64x32xf32>, tensor<1x64x32xf32>) outs(%e : tensor<1x64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32xf32>
  %tail = tensor.extract_slice %sum[0, 16, 0] [1, 48, 32] [1, 1, 1] : tensor<1x64x32xf32> to tensor<1x48x32xf32>
  %e1 = tensor.empty() : tensor<1x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x48xf32>) -> tensor<1x48xf32>
  %rows = linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%tail : tensor<1x48x32xf32>) outs(%f : tensor<1x48xf32>) {
  ^bb0(%a: f32, %s: f32):
    %n = arith.addf %a, %s : f32
    linalg.yield %n : f32
  } -> tensor<1x48xf32>
  return %sum, %rows : tensor<1x64x32xf32>, tensor<1x48xf32>
}

func.func @main(%x: tensor<1x64x32xf32>, %r: tensor<1x64x32xf32>) -> (tensor<1x64x32xf32>, tensor<1x48xf32>) {
  %y:2 = call @kernel_0(%x, %r) : (tensor<1x64x32xf32>, tensor<1x64x32xf32>) -> (tensor<1x64x32xf32>, tensor<1x48xf32>)
  return %y#0, %y#1 : tensor<1x64x32xf32>, tensor<1x48xf32>
}
