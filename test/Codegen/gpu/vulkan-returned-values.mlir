// Values the entry function returns that no kernel computes (codegen/gpu/returned_values.py):
// an input returned as is (ONNX Identity) and a constant (an output that rewriting
// folded). Bufferized, the entry function copied each into its out-parameter, a loop
// or a store between the kernels that no dispatch plan holds (`the entry function does
// scf.for between its kernels`). Each is passed through a kernel of its own, which
// returns its argument (the kernel's compilation copies a result it passes on:
// returned_copies.py); a kernel's result returned reshaped is left as it is.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2xf32>
// CHECK: %[[FOLDED:.+]] = arith.constant dense<[1.500000e+00, 2.000000e+00, 2.500000e-01]> : tensor<3xf32>
// CHECK: %[[NEG:.+]] = call @kernel_0_neg(%[[X]])
// CHECK: %[[EXPANDED:.+]] = tensor.expand_shape %[[NEG]]
// CHECK: %[[INPUT:.+]] = call @kernel_1_copy(%[[X]]) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[CONSTANT:.+]] = call @kernel_2_copy(%[[FOLDED]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[EXPANDED]], %[[INPUT]], %[[CONSTANT]]
// CHECK-LABEL: func.func private @kernel_1_copy(
// CHECK-SAME: %[[ARG:[a-z0-9]+]]: tensor<2xf32>) -> tensor<2xf32> attributes {dnnf.kernel}
// CHECK-NEXT: return %[[ARG]]
// CHECK-LABEL: func.func private @kernel_2_copy(
// CHECK-SAME: attributes {dnnf.kernel}
func.func private @kernel_0_neg(%x: tensor<2xf32>) -> tensor<2xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<2xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
       ins(%x : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  return %n : tensor<2xf32>
}

func.func @main(%x: tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<3xf32>) {
  %n = call @kernel_0_neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %folded = arith.constant dense<[1.5, 2.0, 0.25]> : tensor<3xf32>
  %e = tensor.expand_shape %n [[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
  return %e, %x, %folded : tensor<1x2xf32>, tensor<2xf32>, tensor<3xf32>
}
