// Bad option values are MLIR diagnostics at the (first) function, failing the pass.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --ecg-fuse=mode=foo
// RUN: not dnnf-opt %s '--ecg-fuse=profile=true cpu=nonesuch' 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: not dnnf-opt %s --ecg-fuse=bogus=1 2>&1 | FileCheck %s --check-prefix=OPTION

// expected-error@below {{ecg-fuse: unknown mode 'foo' (one of dnnf, tvm, none)}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ecg.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// PROFILE: error: ecg-fuse: {{.*}}nonesuch
// OPTION: has no option 'bogus'
