// What the GPU code generator cannot compile yet is an error naming the kernel and
// the op, at the module's first function: a dynamic shape, an element type the GPU
// targets lack.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-lower=target=vulkan
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-codegen-prepare=target=vulkan

#id = affine_map<(i) -> (i)>
// expected-error@below {{kernel kernel_0: linalg.generic has a dynamic shape (tensor<?xf32>): GPU kernels are compiled for static shapes}}
func.func private @kernel_0(%a: tensor<?xf32>, %e: tensor<?xf32>) -> tensor<?xf32> attributes {dnnf.kernel} {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.negf %x : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @main(%a: tensor<?xf32>, %e: tensor<?xf32>) -> tensor<?xf32> {
  %r = call @kernel_0(%a, %e) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

#id = affine_map<(i) -> (i)>
// expected-error@below {{kernel kernel_0: linalg.generic computes in f64, which the GPU targets do not support yet (they take f32, f16, i64, i32, i1)}}
func.func private @kernel_0(%a: tensor<8xf64>) -> tensor<8xf64> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<8xf64>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
       ins(%a : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %t = arith.negf %x : f64
    linalg.yield %t : f64
  } -> tensor<8xf64>
  return %r : tensor<8xf64>
}

func.func @main(%a: tensor<8xf64>) -> tensor<8xf64> {
  %r = call @kernel_0(%a) : (tensor<8xf64>) -> tensor<8xf64>
  return %r : tensor<8xf64>
}
