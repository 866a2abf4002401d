// A kernel reading the leading part of a value it computes (codegen/gpu/partial_reads.py):
// a rotation, the negated second half of each row before its first half, with
// the rotated value returned beside the value itself. The first half is read as
// `d mod 16`, so its copy fuses like the negation of the second half: one launch, no
// fallback to a launch per op.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(h, s, d) -> (h, s, d)>
func.func private @kernel_0(%x: tensor<4x10x16xf32>) -> (tensor<4x10x16xf32>, tensor<4x10x16xf32>) attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<4x10x16xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%x : tensor<4x10x16xf32>) outs(%e : tensor<4x10x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x10x16xf32>
  %hi = tensor.extract_slice %q[0, 0, 8] [4, 10, 8] [1, 1, 1] : tensor<4x10x16xf32> to tensor<4x10x8xf32>
  %lo = tensor.extract_slice %q[0, 0, 0] [4, 10, 8] [1, 1, 1] : tensor<4x10x16xf32> to tensor<4x10x8xf32>
  %e2 = tensor.empty() : tensor<4x10x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%hi : tensor<4x10x8xf32>) outs(%e2 : tensor<4x10x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x10x8xf32>
  %rotated = tensor.concat dim(2) %n, %lo : (tensor<4x10x8xf32>, tensor<4x10x8xf32>) -> tensor<4x10x16xf32>
  return %q, %rotated : tensor<4x10x16xf32>, tensor<4x10x16xf32>
}

func.func @main(%x: tensor<4x10x16xf32>) -> (tensor<4x10x16xf32>, tensor<4x10x16xf32>) {
  %r:2 = call @kernel_0(%x) : (tensor<4x10x16xf32>) -> (tensor<4x10x16xf32>, tensor<4x10x16xf32>)
  return %r#0, %r#1 : tensor<4x10x16xf32>, tensor<4x10x16xf32>
}
