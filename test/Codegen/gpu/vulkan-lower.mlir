// dnnf-lower-to-spirv: the Vulkan backend's five steps in order, the kernels replaced by
// gpu.binary ops of SPIR-V that spirv-val accepted. The five step passes, each in a
// dnnf-opt of its own, make the same module byte for byte; the emitted module is all
// the runtime needs: the dispatch plan is read from it (--emit=plan), and the SPIR-V
// accesses its storage buffers a vec4 at a time (--emit=spirv-asm).
// RUN: dnnf-opt %s --dnnf-lower-to-spirv -o %t.lower.mlir
// RUN: dnnf-opt %s --dnnf-lower=target=vulkan -o %t.any.mlir
// RUN: dnnf-opt %s --dnnf-codegen-prepare=target=vulkan | dnnf-opt --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=target=vulkan | dnnf-opt --dnnf-codegen-map-to-hardware=target=vulkan \
// RUN:   | dnnf-opt --dnnf-codegen-emit=target=vulkan -o %t.steps.mlir
// RUN: FileCheck %s < %t.lower.mlir
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=vulkan --emit=plan | FileCheck %s --check-prefix=PLAN
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=vulkan --emit=spirv-asm | FileCheck %s --check-prefix=SPIRV
// (lit's builtin diff drops PYTHONPATH from the commands after it: it comes last.)
// RUN: diff %t.any.mlir %t.lower.mlir
// RUN: diff %t.steps.mlir %t.lower.mlir

// CHECK: module attributes {dnnf.codegen.device = "generic", dnnf.codegen.kernels = 1 : i64,
// CHECK-SAME: dnnf.codegen.target = "vulkan"
// CHECK-SAME: gpu.container_module
// CHECK-LABEL: func.func private @kernel_0(
// CHECK: gpu.launch_func @kernel_0_kernel::@kernel_0_kernel
// CHECK: gpu.binary @kernel_0_kernel {dnnf.gpu.requires = []} [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader], [SPV_KHR_storage_buffer_storage_class]>, api=Vulkan
// CHECK-LABEL: func.func @main(

// PLAN: dnnf-vulkan-plan 1
// PLAN-NEXT: buffer 0 65536 input 0 65536
// PLAN-NEXT: buffer 1 1024 input 1 1024
// PLAN-NEXT: buffer 2 65536 output 0 65536
// PLAN-NEXT: kernel 0 0 kernel_0_kernel 3 128 1 1 kernel_0_kernel
// PLAN-NEXT: dispatch 0 32 1 1 0 0:0:65536 1:0:1024 2:0:65536

// SPIRV-LABEL: ; kernel 0: kernel_0_kernel
// SPIRV: OpEntryPoint GLCompute %[[MAIN:.*]] "kernel_0_kernel"
// SPIRV: OpExecutionMode %[[MAIN]] LocalSize 128 1 1
// SPIRV: %[[V4:.*]] = OpTypeVector %float 4
// SPIRV: %{{.*}} = OpTypeArray %[[V4]] %uint_4096
// SPIRV: %[[PTR:.*]] = OpTypePointer StorageBuffer %[[V4]]
// SPIRV: %[[X:.*]] = OpAccessChain %[[PTR]]
// SPIRV: OpLoad %[[V4]] %[[X]]
// SPIRV: %[[B:.*]] = OpAccessChain %[[PTR]]
// SPIRV: OpLoad %[[V4]] %[[B]]
// SPIRV: %[[Y:.*]] = OpAccessChain %[[PTR]]
// SPIRV: OpStore %[[Y]]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func private @kernel_0(%x: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<64x256xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %b : tensor<64x256xf32>, tensor<256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %t, %z : f32
    linalg.yield %r : f32
  } -> tensor<64x256xf32>
  return %s : tensor<64x256xf32>
}

func.func @main(%x: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %r = call @kernel_0(%x, %b) : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
