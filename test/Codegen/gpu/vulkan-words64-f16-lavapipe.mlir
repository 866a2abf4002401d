// The lavapipe profile's f16 storage buffers (GpuDevice.vec4_as_words64, codegen/gpu/storage.py):
// a buffer accessed a vec4 of f16 at a time is declared as single 64-bit words, each load
// bitcast to the vec4 of halves and each vec4 bitcast before its store, so that lavapipe
// loads one component where it loaded four. A kernel whose f16 buffers are all words binds
// no 16-bit storage: Float16 and Int64 only (shaderFloat16, shaderInt64), a half read alone
// taken from its word; one with an f16 buffer that is not all vec4s still needs
// StorageBuffer16BitAccess.
// The generic profile keeps vec4s of halves: fp16-storage.mlir, test_vulkan_words64.py.
// RUN: dnnf-opt %s --dnnf-lower="target=vulkan device=lavapipe" | FileCheck %s
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=vulkan --device=lavapipe --emit=spirv-asm | FileCheck %s --check-prefix=SPIRV

// CHECK-LABEL: func.func private @kernel_0(
// CHECK: gpu.binary @kernel_0_kernel {dnnf.gpu.requires = ["shaderInt64", "shaderFloat16"]} [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Float16], [SPV_KHR_storage_buffer_storage_class]>, api=Vulkan
// CHECK-LABEL: func.func private @kernel_1(
// CHECK: gpu.binary @kernel_1_kernel {dnnf.gpu.requires = ["shaderInt64", "shaderFloat16"]}
// CHECK-LABEL: func.func private @kernel_2(
// CHECK: gpu.binary @kernel_2_kernel {dnnf.gpu.requires = ["shaderFloat16", "storageBuffer16BitAccess"]} [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader, Float16, StorageBuffer16BitAccess], [SPV_KHR_storage_buffer_storage_class]>
// CHECK-LABEL: func.func @main(

// f16 x + b, then ReLU: x, b and the result in words.
// SPIRV-LABEL: ; kernel 0: kernel_0_kernel
// SPIRV-NOT: OpCapability StorageBuffer16BitAccess
// SPIRV-DAG: %[[H4:.*]] = OpTypeVector %half 4
// SPIRV-DAG: %{{.*}} = OpTypeArray %ulong %uint_4096
// SPIRV-DAG: %[[PTR:.*]] = OpTypePointer StorageBuffer %ulong
// SPIRV-NOT: OpTypePointer StorageBuffer %[[H4]]
// SPIRV-NOT: OpTypePointer StorageBuffer %half
// SPIRV: %[[X:.*]] = OpAccessChain %[[PTR]]
// SPIRV: %[[XW:.*]] = OpLoad %ulong %[[X]]
// SPIRV: OpBitcast %[[H4]] %[[XW]]
// SPIRV: %[[B:.*]] = OpAccessChain %[[PTR]]
// SPIRV: %[[BW:.*]] = OpLoad %ulong %[[B]]
// SPIRV: OpBitcast %[[H4]] %[[BW]]
// SPIRV: %[[R:.*]] = OpBitcast %ulong %{{.*}}
// SPIRV: %[[Y:.*]] = OpAccessChain %[[PTR]]
// SPIRV: OpStore %[[Y]] %[[R]]
// f16 x + x^T: x read a vec4 along its rows and a half down its columns, the half taken
// from its word.
// SPIRV-LABEL: ; kernel 1: kernel_1_kernel
// SPIRV-NOT: OpCapability StorageBuffer16BitAccess
// SPIRV-NOT: OpTypePointer StorageBuffer %half
// SPIRV: OpUMod
// SPIRV: %[[T:.*]] = OpLoad %ulong
// SPIRV: %[[TV:.*]] = OpBitcast %v4half %[[T]]
// SPIRV: OpVectorExtractDynamic %half %[[TV]]
// SPIRV: OpBitcast %ulong
// f16 ReLU of a 35x35 tensor (1225 halves, not a whole number of vec4s): f16 storage.
// SPIRV-LABEL: ; kernel 2: kernel_2_kernel
// SPIRV: OpCapability StorageBuffer16BitAccess
// SPIRV: OpTypePointer StorageBuffer %half
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#t = affine_map<(i, j) -> (j, i)>
func.func private @kernel_0(%x: tensor<64x256xf16>, %b: tensor<256xf16>) -> tensor<64x256xf16> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<64x256xf16>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %b : tensor<64x256xf16>, tensor<256xf16>) outs(%e : tensor<64x256xf16>) {
  ^bb0(%a: f16, %c: f16, %o: f16):
    %t = arith.addf %a, %c : f16
    %z = arith.constant 0.0 : f16
    %r = arith.maximumf %t, %z : f16
    linalg.yield %r : f16
  } -> tensor<64x256xf16>
  return %s : tensor<64x256xf16>
}

func.func private @kernel_1(%x: tensor<36x36xf16>) -> tensor<36x36xf16> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<36x36xf16>
  %s = linalg.generic {indexing_maps = [#id, #t, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %x : tensor<36x36xf16>, tensor<36x36xf16>) outs(%e : tensor<36x36xf16>) {
  ^bb0(%a: f16, %c: f16, %o: f16):
    %r = arith.addf %a, %c : f16
    linalg.yield %r : f16
  } -> tensor<36x36xf16>
  return %s : tensor<36x36xf16>
}

func.func private @kernel_2(%x: tensor<35x35xf16>) -> tensor<35x35xf16> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<35x35xf16>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<35x35xf16>) outs(%e : tensor<35x35xf16>) {
  ^bb0(%a: f16, %o: f16):
    %z = arith.constant 0.0 : f16
    %r = arith.maximumf %a, %z : f16
    linalg.yield %r : f16
  } -> tensor<35x35xf16>
  return %s : tensor<35x35xf16>
}

func.func @main(%x: tensor<64x256xf16>, %b: tensor<256xf16>, %p: tensor<36x36xf16>, %u: tensor<35x35xf16>)
    -> (tensor<64x256xf16>, tensor<36x36xf16>, tensor<35x35xf16>) {
  %r = call @kernel_0(%x, %b) : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  %q = call @kernel_1(%p) : (tensor<36x36xf16>) -> tensor<36x36xf16>
  %v = call @kernel_2(%u) : (tensor<35x35xf16>) -> tensor<35x35xf16>
  return %r, %q, %v : tensor<64x256xf16>, tensor<36x36xf16>, tensor<35x35xf16>
}
