// dnnf-externalize-weights reports an entry function it cannot tell at the module.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-externalize-weights
// RUN: not dnnf-opt %s --dnnf-externalize-weights=entry=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: dnnf-externalize-weights: no function @missing in the module

// Which function is the entry must be named when several are public.
// expected-error@below {{dnnf-externalize-weights: the module has 2 public functions: name the entry (option entry=NAME)}}
module {
  func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
