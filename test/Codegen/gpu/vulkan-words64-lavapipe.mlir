// The lavapipe profile's storage buffers (GpuDevice.vec4_as_words64, codegen/gpu/storage.py):
// a buffer accessed a vec4 of f32 or i32 at a time is declared as vec2s of 64-bit words,
// each load bitcast to the vec4 and each vec4 bitcast before its store, so that lavapipe
// loads two components where it loaded four; the binary needs Int64 (shaderInt64 in the
// plan). f16 vec4s are one word each: vulkan-words64-f16-lavapipe.mlir. The generic
// profile keeps vec4s of floats: vulkan-lower.mlir.
// RUN: dnnf-opt %s --dnnf-lower="target=vulkan device=lavapipe" | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=vulkan --device=lavapipe --emit=spirv-asm | FileCheck %s --check-prefix=SPIRV
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=vulkan --device=lavapipe --emit=plan | FileCheck %s --check-prefix=PLAN

// CHECK: module attributes {dnnf.codegen.device = "lavapipe"
// CHECK-LABEL: func.func private @kernel_0(
// CHECK: gpu.binary @kernel_0_kernel {dnnf.gpu.requires = ["shaderInt64"]} [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64], [SPV_KHR_storage_buffer_storage_class]>, api=Vulkan
// CHECK-LABEL: func.func private @kernel_1(
// CHECK: gpu.binary @kernel_1_kernel {dnnf.gpu.requires = ["shaderInt64"]}
// CHECK-LABEL: func.func @main(

// PLAN: dnnf-vulkan-plan 1
// PLAN-NEXT: require shaderInt64

// f32: x + b, then ReLU; x, b and the result in words.
// SPIRV-LABEL: ; kernel 0: kernel_0_kernel
// SPIRV-DAG: %[[V4:.*]] = OpTypeVector %float 4
// SPIRV-DAG: %[[U64:.*]] = OpTypeInt 64 0
// SPIRV-DAG: %[[W2:.*]] = OpTypeVector %[[U64]] 2
// SPIRV-DAG: %{{.*}} = OpTypeArray %[[W2]] %uint_4096
// SPIRV-DAG: %[[PTR:.*]] = OpTypePointer StorageBuffer %[[W2]]
// SPIRV-NOT: OpTypePointer StorageBuffer %[[V4]]
// SPIRV: %[[X:.*]] = OpAccessChain %[[PTR]]
// SPIRV: %[[XW:.*]] = OpLoad %[[W2]] %[[X]]
// SPIRV: OpBitcast %[[V4]] %[[XW]]
// SPIRV: %[[B:.*]] = OpAccessChain %[[PTR]]
// SPIRV: %[[BW:.*]] = OpLoad %[[W2]] %[[B]]
// SPIRV: OpBitcast %[[V4]] %[[BW]]
// SPIRV: %[[R:.*]] = OpBitcast %[[W2]] %{{.*}}
// SPIRV: %[[Y:.*]] = OpAccessChain %[[PTR]]
// SPIRV: OpStore %[[Y]] %[[R]]
// i32: the same words, bitcast to vec4s of ints.
// SPIRV-LABEL: ; kernel 1: kernel_1_kernel
// SPIRV-DAG: %[[I4:.*]] = OpTypeVector %uint 4
// SPIRV-DAG: %[[IW2:.*]] = OpTypeVector %ulong 2
// SPIRV-DAG: %[[IPTR:.*]] = OpTypePointer StorageBuffer %[[IW2]]
// SPIRV: %[[P:.*]] = OpAccessChain %[[IPTR]]
// SPIRV: %[[PW:.*]] = OpLoad %[[IW2]] %[[P]]
// SPIRV: OpBitcast %[[I4]] %[[PW]]
// SPIRV: OpStore
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

func.func private @kernel_1(%p: tensor<32x64xi32>) -> tensor<32x64xi32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<32x64xi32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%p : tensor<32x64xi32>) outs(%e : tensor<32x64xi32>) {
  ^bb0(%a: i32, %o: i32):
    %t = arith.muli %a, %a : i32
    linalg.yield %t : i32
  } -> tensor<32x64xi32>
  return %s : tensor<32x64xi32>
}

func.func @main(%x: tensor<64x256xf32>, %b: tensor<256xf32>, %p: tensor<32x64xi32>) -> (tensor<64x256xf32>, tensor<32x64xi32>) {
  %r = call @kernel_0(%x, %b) : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %q = call @kernel_1(%p) : (tensor<32x64xi32>) -> tensor<32x64xi32>
  return %r, %q : tensor<64x256xf32>, tensor<32x64xi32>
}
