// What dnnf-gpu-fp16-storage refuses: an error at the entry function naming it and the op.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-gpu-fp16-storage


// A computation left in the entry function (nothing outlined) is refused: its f32
// operands would be f16 values.
// expected-error@below {{main: linalg.generic computes between kernels; fp16 storage needs every computation in a kernel function (ecg-outline-kernels)}}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<2.0> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
       ins(%x, %c : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %t = arith.mulf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A kernel's result computed in the entry function from a constant (a Transpose left
// outside the kernels) is refused as well: nothing may compute on f16 storage there.
func.func private @kernel_0(%a: tensor<8xf32>) -> tensor<8xf32> attributes {dnnf.kernel} {
  return %a : tensor<8xf32>
}

// expected-error@below {{main: tensor.pad computes between kernels; fp16 storage needs every computation in a kernel function (ecg-outline-kernels)}}
func.func @main(%x: tensor<6xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<6xf32> to tensor<8xf32>
  %r = call @kernel_0(%p) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
