// dnnf-lower-to-opencl: the OpenCL backend's five steps in order (the GPU steps the
// Vulkan target takes, then the printer), the kernels replaced by gpu.binary ops whose
// object is OpenCL C. The five step passes, each in a dnnf-opt of its own, make the same
// module byte for byte; the dispatch plan is read from it (--emit=plan) and the program
// printed (--emit=opencl): vec4 buffers are float4 arrays, ReLU's maximum keeps NaN.
// RUN: dnnf-opt %s --dnnf-lower-to-opencl -o %t.lower.mlir
// RUN: dnnf-opt %s --dnnf-lower=target=opencl -o %t.any.mlir
// RUN: dnnf-opt %s --dnnf-codegen-prepare=target=opencl | dnnf-opt --dnnf-codegen-schedule=target=opencl \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=target=opencl | dnnf-opt --dnnf-codegen-map-to-hardware=target=opencl \
// RUN:   | dnnf-opt --dnnf-codegen-emit=target=opencl -o %t.steps.mlir
// RUN: FileCheck %s < %t.lower.mlir
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=opencl --emit=plan | FileCheck %s --check-prefix=PLAN
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=opencl --emit=opencl | FileCheck %s --check-prefix=OPENCL
// (lit's builtin diff drops PYTHONPATH from the commands after it: it comes last.)
// RUN: diff %t.any.mlir %t.lower.mlir
// RUN: diff %t.steps.mlir %t.lower.mlir

// CHECK: module attributes {dnnf.codegen.device = "generic", dnnf.codegen.kernels = 1 : i64,
// CHECK-SAME: dnnf.codegen.target = "opencl"
// CHECK-SAME: gpu.container_module
// CHECK-LABEL: func.func private @kernel_0(
// CHECK: gpu.launch_func @kernel_0_kernel::@kernel_0_kernel
// CHECK: gpu.binary @kernel_0_kernel  [#gpu.object<#spirv.target_env<#spirv.vce<v1.0, [Kernel, Addresses, Int64], []>, api=OpenCL, #spirv.resource_limits<>>, assembly = "// OpenCL C 1.2
// CHECK-LABEL: func.func @main(

// PLAN: dnnf-opencl-plan 1
// PLAN-NEXT: buffer 0 65536 input 0 65536
// PLAN-NEXT: buffer 1 1024 input 1 1024
// PLAN-NEXT: buffer 2 65536 output 0 65536
// PLAN-NEXT: kernel 0 0 kernel_0_kernel 3 128 1 1 kernel_0_kernel
// PLAN-NEXT: dispatch 0 32 1 1 0 0:0:65536 1:0:1024 2:0:65536

// OPENCL: __kernel __attribute__((reqd_work_group_size(128, 1, 1)))
// OPENCL-LABEL: void kernel_0_kernel(
// OPENCL-NEXT: __global float4 *a0 = (__global float4 *)(a0_buffer + a0_offset);
// OPENCL-NEXT: __global float4 *a1 = (__global float4 *)(a1_buffer + a1_offset);
// OPENCL-NEXT: __global float4 *a2 = (__global float4 *)(a2_buffer + a2_offset);
// OPENCL: const float4 [[ZERO:v[0-9]+]] = (float4)(0x0.0p+0f);
// OPENCL: get_group_id(0)
// OPENCL: get_local_id(0)
// OPENCL: const float4 [[X:v[0-9]+]] = a0[[[I:v[0-9]+]]];
// OPENCL: const float4 [[B:v[0-9]+]] = a1[{{v[0-9]+}}];
// OPENCL-NEXT: const float4 [[S:v[0-9]+]] = [[X]] + [[B]];
// OPENCL-NEXT: const float4 [[R:v[0-9]+]] = select(select(fmax([[S]], [[ZERO]]), [[ZERO]], isnan([[ZERO]])), [[S]], isnan([[S]]));
// OPENCL-NEXT: a2[[[I]]] = [[R]];
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
