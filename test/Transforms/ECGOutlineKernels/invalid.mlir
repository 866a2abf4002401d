// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --ecg-outline-kernels

// Kernels are the top-level ops of a function: an ECG op inside another op's region
// has no function of its own to become.
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = scf.execute_region -> tensor<4xf32> {
    // expected-error @+1 {{ecg-outline-kernels: 'ecg.relu' nested in 'scf.execute_region' is not a kernel of its own function}}
    %1 = "ecg.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{ecg-outline-kernels: kernels are outlined from single-block functions}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  %0 = "ecg.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
