// The code generator's passes report a target they do not know at the module's first
// function, naming the targets they know; nothing is lowered.
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-lower=target=sparc
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-lower-to-llvm=target=sparc
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-codegen-prepare=target=sparc
// RUN: dnnf-opt %s --split-input-file --verify-diagnostics --dnnf-codegen-emit=target=sparc

// expected-error@below {{unknown target 'sparc'; known: host, aarch64}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// The first function, whatever follows.
// expected-error@below {{unknown target 'sparc'}}
func.func private @kernel(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @kernel(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
