// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-kernel-statistics

// The statistics are those of kernel functions: a module not yet outlined has none.
// expected-error @+1 {{dnnf-kernel-statistics: the module has no kernel functions (run ecg-outline-kernels first)}}
module {
  func.func @not_outlined(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "ecg.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
