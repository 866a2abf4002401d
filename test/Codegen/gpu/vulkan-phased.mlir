// A kernel reading part of a value computed from a contraction (codegen/gpu/phases.py)
// runs "phased": the contraction (with its epilogue) in a first launch, into a buffer
// of the kernel, then every group reading it merged into a second launch. Fused,
// each reader's tiles would compute the contraction again; before, such a kernel ran
// one launch per op.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// A recurrent layer's first step: the input projection of every step is returned, and
// the step reads all of the first step's 48 columns of it, a third of the projection:
// more than computing it again would pay for (``slices.RECOMPUTED_PART``).
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<3x2x8xf32>, %[[W:[a-z0-9]+]]: memref<8x48xf32>, %[[P:[a-z0-9]+]]: memref<3x2x48xf32>, %[[T:[a-z0-9]+]]: memref<1x2x48xf32>
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: gpu.launch_func {{.*}} args(%[[P]] : memref<3x2x48xf32>, %[[X]] : memref<3x2x8xf32>, %[[W]] : memref<8x48xf32>) {dnnf.gpu.writes = [true, false, false]}
// CHECK: gpu.launch_func {{.*}} args(%[[P]] : memref<3x2x48xf32>, %[[T]] : memref<1x2x48xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#x = affine_map<(s, b, n, k) -> (s, b, k)>
#w = affine_map<(s, b, n, k) -> (k, n)>
#o = affine_map<(s, b, n, k) -> (s, b, n)>
#id = affine_map<(b, n) -> (b, n)>
func.func private @kernel_0(%x: tensor<3x2x8xf32>, %w: tensor<8x48xf32>) -> (tensor<3x2x48xf32>, tensor<2x48xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2x48xf32>) -> tensor<3x2x48xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<3x2x8xf32>, tensor<8x48xf32>) outs(%f : tensor<3x2x48xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x2x48xf32>
  %step = tensor.extract_slice %p[0, 0, 0] [1, 2, 48] [1, 1, 1] : tensor<3x2x48xf32> to tensor<1x2x48xf32>
  %rows = tensor.collapse_shape %step [[0, 1], [2]] : tensor<1x2x48xf32> into tensor<2x48xf32>
  %e2 = tensor.empty() : tensor<2x48xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%rows : tensor<2x48xf32>) outs(%e2 : tensor<2x48xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<2x48xf32>
  return %p, %t : tensor<3x2x48xf32>, tensor<2x48xf32>
}

func.func @main(%x: tensor<3x2x8xf32>, %w: tensor<8x48xf32>) -> (tensor<3x2x48xf32>, tensor<2x48xf32>) {
  %r:2 = call @kernel_0(%x, %w) : (tensor<3x2x8xf32>, tensor<8x48xf32>) -> (tensor<3x2x48xf32>, tensor<2x48xf32>)
  return %r#0, %r#1 : tensor<3x2x48xf32>, tensor<2x48xf32>
}

// -----

// LLaMA's projection: its first 32 columns as two heads moved before the sequence
// (the kernel's first result), their halves rotated, and its last 16 columns negated.
// The first launch computes the query heads into the first result (the projection
// written as heads: ``epilogue_dims``) and the negated value columns (``split_sliced_ops``
// splits them off: read whole, they fuse); the second reads the heads and writes the
// rotated halves.
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<10x32xf32>, %{{[a-z0-9]+}}: memref<32x48xf32>, %[[Q:[a-z0-9]+]]: memref<2x10x16xf32>, %{{[a-z0-9]+}}: memref<2x10x16xf32>, %[[V:[a-z0-9]+]]: memref<10x16xf32>)
// CHECK-SAME: dnnf.gpu.schedule = "phased"
// CHECK: gpu.launch_func {{.*}} args(%[[Q]] : memref<2x10x16xf32>, {{.*}}, %[[V]] : memref<10x16xf32>) {dnnf.gpu.writes = [true, false, false, false, true]}
// CHECK: gpu.launch_func {{.*}} args(%[[Q]] : memref<2x10x16xf32>, {{.*}}) {dnnf.gpu.writes = [false, true, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#x = affine_map<(s, n, k) -> (s, k)>
#w = affine_map<(s, n, k) -> (k, n)>
#o = affine_map<(s, n, k) -> (s, n)>
#id3 = affine_map<(h, s, d) -> (h, s, d)>
#id2 = affine_map<(s, d) -> (s, d)>
func.func private @kernel_0(%x: tensor<10x32xf32>, %w: tensor<32x48xf32>) -> (tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<10x16xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<10x48xf32>) -> tensor<10x48xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<10x32xf32>, tensor<32x48xf32>) outs(%f : tensor<10x48xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<10x48xf32>
  %q = tensor.extract_slice %p[0, 0] [10, 32] [1, 1] : tensor<10x48xf32> to tensor<10x32xf32>
  %v = tensor.extract_slice %p[0, 32] [10, 16] [1, 1] : tensor<10x48xf32> to tensor<10x16xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [10, 2, 16] : tensor<10x32xf32> into tensor<10x2x16xf32>
  %et = tensor.empty() : tensor<2x10x16xf32>
  %qt = linalg.transpose ins(%q3 : tensor<10x2x16xf32>) outs(%et : tensor<2x10x16xf32>) permutation = [1, 0, 2]
  %first = tensor.extract_slice %qt[0, 0, 0] [2, 10, 8] [1, 1, 1] : tensor<2x10x16xf32> to tensor<2x10x8xf32>
  %second = tensor.extract_slice %qt[0, 0, 8] [2, 10, 8] [1, 1, 1] : tensor<2x10x16xf32> to tensor<2x10x8xf32>
  %en = tensor.empty() : tensor<2x10x8xf32>
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%second : tensor<2x10x8xf32>) outs(%en : tensor<2x10x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<2x10x8xf32>
  %rotated = tensor.concat dim(2) %n, %first : (tensor<2x10x8xf32>, tensor<2x10x8xf32>) -> tensor<2x10x16xf32>
  %ev = tensor.empty() : tensor<10x16xf32>
  %vn = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
       ins(%v : tensor<10x16xf32>) outs(%ev : tensor<10x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<10x16xf32>
  return %qt, %rotated, %vn : tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<10x16xf32>
}

func.func @main(%x: tensor<10x32xf32>, %w: tensor<32x48xf32>) -> (tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<10x16xf32>) {
  %r:3 = call @kernel_0(%x, %w) : (tensor<10x32xf32>, tensor<32x48xf32>) -> (tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<10x16xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x10x16xf32>, tensor<2x10x16xf32>, tensor<10x16xf32>
}
