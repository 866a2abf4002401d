// dnnf-gpu-fp16-storage: the f32 tensors between kernels (constants, kernel results)
// in f16, the entry function's inputs and outputs f32; each kernel widens its f16
// arguments and narrows its f16 results around an f32 body, its matmul still
// accumulating in f32.
// RUN: dnnf-opt %s --split-input-file --dnnf-gpu-fp16-storage | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func private @kernel_0
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x4xf16>) -> tensor<4x4xf16>
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8x4xf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[ACC:.*]] = linalg.matmul ins(%[[X]], %[[WIDE]] : tensor<4x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[NARROW:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[NARROW]] : tensor<4x4xf16>
func.func private @kernel_0(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<4x4xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// CHECK-LABEL: func.func private @kernel_1
// CHECK-SAME: (%[[A:.*]]: tensor<16xf16>) -> tensor<16xf32>
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<16xf16>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[WIDE]] : tensor<16xf32>)
// CHECK: math.exp %{{.*}} : f32
// CHECK: return %[[EXP]] : tensor<16xf32>
func.func private @kernel_1(%a: tensor<16xf32>) -> tensor<16xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
       ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// The weight constant is converted at compile time; the result between the kernels is
// f16 (reshaped in f16), the model's output f32, its input f32.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: tensor<4x8xf32>) -> tensor<16xf32>
// CHECK: %[[C:.*]] = arith.constant dense<{{.*}}> : tensor<8x4xf16>
// CHECK: %[[P:.*]] = call @kernel_0(%[[IN]], %[[C]]) : (tensor<4x8xf32>, tensor<8x4xf16>) -> tensor<4x4xf16>
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[P]] {{.*}} : tensor<4x4xf16> into tensor<16xf16>
// CHECK: %[[Y:.*]] = call @kernel_1(%[[R]]) : (tensor<16xf16>) -> tensor<16xf32>
// CHECK: return %[[Y]] : tensor<16xf32>
func.func @main(%x: tensor<4x8xf32>) -> tensor<16xf32> {
  %w = arith.constant dense<[[0.5, 1.0, 1.5, 2.0], [0.25, 0.5, 0.75, 1.0], [1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 0.4],
                             [0.5, 1.0, 1.5, 2.0], [0.25, 0.5, 0.75, 1.0], [1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 0.4]]> : tensor<8x4xf32>
  %p = call @kernel_0(%x, %w) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %r = tensor.collapse_shape %p [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %y = call @kernel_1(%r) : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// A kernel called with two signatures (once on the model's input, once on another
// kernel's f16 result) is cloned; integer tensors are left as they are.
// CHECK-LABEL: func.func private @kernel_0
// CHECK-SAME: (%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xi64>) -> tensor<8xf16>
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = call @kernel_0(%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<8xi64>) -> tensor<8xf16>
// CHECK: %[[B:.*]] = call @kernel_0_1(%[[A]], %{{.*}}) : (tensor<8xf16>, tensor<8xi64>) -> tensor<8xf32>
// CHECK: return %[[B]] : tensor<8xf32>
// CHECK-LABEL: func.func private @kernel_0_1
// CHECK-SAME: (%{{.*}}: tensor<8xf16>, %{{.*}}: tensor<8xi64>) -> tensor<8xf32>
// CHECK: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func private @kernel_0(%a: tensor<8xf32>, %i: tensor<8xi64>) -> tensor<8xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
       ins(%a, %i : tensor<8xf32>, tensor<8xi64>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %n: i64, %o: f32):
    %f = arith.sitofp %n : i64 to f32
    %t = arith.addf %v, %f : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @main(%x: tensor<8xf32>, %i: tensor<8xi64>) -> tensor<8xf32> {
  %a = call @kernel_0(%x, %i) : (tensor<8xf32>, tensor<8xi64>) -> tensor<8xf32>
  %b = call @kernel_0(%a, %i) : (tensor<8xf32>, tensor<8xi64>) -> tensor<8xf32>
  return %b : tensor<8xf32>
}
