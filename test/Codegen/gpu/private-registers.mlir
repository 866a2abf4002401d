// A convolution's padded window does not vectorize (a gather): its thread's vec4 of
// accumulators stays loops over a private array. The device code unrolls those loops
// (gpu/unrolling.unroll_private_array_loops) and splits the array into one private
// scalar per lane (split_private_arrays), which every driver keeps in registers: no
// array of 4 indexed at run time is left, in OpenCL C nor in SPIR-V.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=opencl --emit=opencl | FileCheck %s --check-prefix=OPENCL
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=vulkan --emit=spirv-asm | FileCheck %s --check-prefix=SPIRV

// OPENCL-LABEL: void kernel_0_conv_relu_kernel(
// OPENCL-NOT: [4];
// OPENCL-COUNT-4: float m{{[0-9]+}}[1];
// OPENCL-NOT: [4];
// OPENCL: for (
// OPENCL: fma(
// OPENCL: m{{[0-9]+}}[0] =
// OPENCL-NOT: [4];

// SPIRV: %_arr_float_uint_1 = OpTypeArray %float %uint_1
// SPIRV-NOT: OpTypeArray %float %uint_4
// SPIRV: OpFunction
// SPIRV-COUNT-4: OpVariable %_ptr_Function_{{.*}} Function
// SPIRV-NOT: OpVariable {{.*}} Function

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func private @kernel_0_conv_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%padded, %w : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y : tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %r = call @kernel_0_conv_relu(%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}
