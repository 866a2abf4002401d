// The Vulkan target's options: a pass of the Vulkan backend refuses a target of another
// kind (at the module's first function); a target pass refuses an option the target
// does not take and a device profile it does not know.
// RUN: dnnf-opt %s --verify-diagnostics --dnnf-lower-to-spirv=target=host
// RUN: not dnnf-opt %s --dnnf-lower=target=vulkan,cpu=znver3 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not dnnf-opt %s --dnnf-codegen-prepare=target=vulkan,device=mali 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not dnnf-opt %s --dnnf-lower-to-llvm=target=vulkan 2>&1 | FileCheck %s --check-prefix=KIND

// OPTION: error: {{.*}}target 'vulkan' takes no option cpu (its options: device)
// DEVICE: error: {{.*}}unknown Vulkan device profile 'mali'; known: generic
// KIND: error: {{.*}}vulkan (generic) is not a cpu target

// expected-error@below {{is not a vulkan target: dnnf-lower (codegen.lower) lowers for any target}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
