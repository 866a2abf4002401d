// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-instrument-kernels

// The timers go around calls of the lowered code: ECG or func is too early.
// expected-error @+1 {{dnnf-instrument-kernels: the module is not lowered to the LLVM dialect (run the code generator first)}}
module {
  func.func @entry(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Without kernel functions (--no-outline) there is nothing to time.
// expected-error @+1 {{dnnf-instrument-kernels: the module has no kernel functions (compile with ecg-outline-kernels)}}
module {
  llvm.func @entry() {
    llvm.return
  }
}
