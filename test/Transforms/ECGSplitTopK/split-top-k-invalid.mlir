// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --ecg-split-top-k=max-iterations=2000

// Even a chunk of 2k costs a thread more than the budget: refused by name.
func.func @too_large(%x: tensor<70000xf32>) -> (tensor<600xf32>, tensor<600xi64>) {
  // expected-error @+1 {{ecg-split-top-k: TopK with k = 600 does not fit a GPU thread's loop budget: the TopK of a chunk of 1200 elements (2k) runs up to 18665 loop iterations a thread, past the 2000 allowed}}
  %v, %i = "ecg.top_k"(%x) {axis = 0 : i64, k = 600 : i64, largest = 1 : i64} : (tensor<70000xf32>) -> (tensor<600xf32>, tensor<600xi64>)
  return %v, %i : tensor<600xf32>, tensor<600xi64>
}
