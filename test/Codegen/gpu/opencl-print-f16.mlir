// The OpenCL C printer on fp16 storage (--precision fp16, codegen/gpu/opencl/half.py):
// buffers of f16 are `half` pointers read and written through vload_half / vstore_half_rte
// (OpenCL 1.2 core, no extension), their values held in float; a kernel computing in half
// is printed with `half` values under the cl_khr_fp16 pragma.
// RUN: %PYTHON -m dnnf_mlir.codegen.gpu.opencl %s --split-input-file | FileCheck %s

// CHECK-LABEL: // OpenCL C 1.2
// CHECK-NOT: cl_khr_fp16
// CHECK: void storage(
// CHECK-NEXT: __global half *a0 = (__global half *)(a0_buffer + a0_offset);
// CHECK-NEXT: __global half *a1 = (__global half *)(a1_buffer + a1_offset);
// CHECK-NEXT: __global float *a2 = (__global float *)(a2_buffer + a2_offset);
// CHECK: const float4 [[Q:v[0-9]+]] = vload_half4([[TID:v[0-9]+]], a0);
// CHECK-NEXT: const float4 [[W:v[0-9]+]] = convert_float4([[Q]]);
// CHECK-NEXT: const float [[L:v[0-9]+]] = [[Q]].s2;
// CHECK-NEXT: const float [[X:v[0-9]+]] = (float)[[L]];
// CHECK-NEXT: const long [[I:v[0-9]+]] = [[TID]] * [[C4:v[0-9]+]];
// CHECK-NEXT: const float4 [[V:v[0-9]+]] = vload_half4(0, a1 + [[I]]);
// CHECK-NEXT: const float4 [[VW:v[0-9]+]] = convert_float4([[V]]);
// CHECK-NEXT: const float4 [[S:v[0-9]+]] = [[W]] + [[VW]];
// CHECK-NEXT: ushort4 [[H:v[0-9]+]]_bits;
// CHECK-NEXT: vstore_half4_rte([[S]], 0, (__private half *)&[[H]]_bits);
// CHECK-NEXT: const float4 [[H]] = vload_half4(0, (__private half *)&[[H]]_bits);
// CHECK-NEXT: vstore_half4_rte([[H]], 0, a1 + [[I]]);
// CHECK-NEXT: const float [[Y:v[0-9]+]] = [[X]] * [[X]];
// CHECK-NEXT: ushort [[R:v[0-9]+]]_bits;
// CHECK-NEXT: vstore_half_rte([[Y]], 0, (__private half *)&[[R]]_bits);
// CHECK-NEXT: const float [[R]] = vload_half(0, (__private half *)&[[R]]_bits);
// CHECK-NEXT: const float [[M:v[0-9]+]] = select(select(fmax([[R]], [[L]]), [[L]], isnan([[L]])), [[R]], isnan([[R]]));
// CHECK-NEXT: const long [[J:v[0-9]+]] = [[TID]] + [[C64:v[0-9]+]];
// CHECK-NEXT: vstore_half_rte([[M]], [[J]], a1);
// CHECK-NEXT: const float [[B:v[0-9]+]] = vload_half([[J]], a1);
// CHECK-NEXT: const float [[F:v[0-9]+]] = (float)[[B]];
// CHECK-NEXT: a2[[[TID]]] = [[F]];

// Storage only: a vec4 buffer of f16 (vload_half4 at the vector's index), a vector load
// and store of a scalar f16 buffer, truncations rounded through a private half, a maximum
// of two halves (exact in float), a scalar store and load: no half arithmetic.
module attributes {gpu.container_module} {
  gpu.module @storage {
    gpu.func @storage(%x: memref<16xvector<4xf16>>, %y: memref<128xf16>, %z: memref<16xf32>) kernel attributes {known_block_size = array<i32: 16, 1, 1>} {
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %tid = gpu.thread_id x
      %q = memref.load %x[%tid] : memref<16xvector<4xf16>>
      %w = arith.extf %q : vector<4xf16> to vector<4xf32>
      %l = vector.extract %q[2] : f16 from vector<4xf16>
      %xl = arith.extf %l : f16 to f32
      %i = arith.muli %tid, %c4 : index
      %v = vector.load %y[%i] : memref<128xf16>, vector<4xf16>
      %vw = arith.extf %v : vector<4xf16> to vector<4xf32>
      %s = arith.addf %w, %vw : vector<4xf32>
      %h = arith.truncf %s : vector<4xf32> to vector<4xf16>
      vector.store %h, %y[%i] : memref<128xf16>, vector<4xf16>
      %sq = arith.mulf %xl, %xl : f32
      %r = arith.truncf %sq : f32 to f16
      %m = arith.maximumf %r, %l : f16
      %j = arith.addi %tid, %c64 : index
      memref.store %m, %y[%j] : memref<128xf16>
      %b = memref.load %y[%j] : memref<128xf16>
      %f = arith.extf %b : f16 to f32
      memref.store %f, %z[%tid] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: // OpenCL C 1.2
// CHECK-NEXT: #pragma OPENCL EXTENSION cl_khr_fp16 : enable
// CHECK: void arithmetic(
// CHECK-NEXT: __global half *a0 = (__global half *)(a0_buffer + a0_offset);
// CHECK: const half [[A:v[0-9]+]] = a0[[[TID:v[0-9]+]]];
// CHECK-NEXT: const half [[S:v[0-9]+]] = [[A]] + [[A]];
// CHECK-NEXT: a0[[[TID]]] = [[S]];

// Half arithmetic (an addf on f16): `half` values, which need cl_khr_fp16.
module attributes {gpu.container_module} {
  gpu.module @arithmetic {
    gpu.func @arithmetic(%x: memref<16xf16>) kernel attributes {known_block_size = array<i32: 16, 1, 1>} {
      %tid = gpu.thread_id x
      %a = memref.load %x[%tid] : memref<16xf16>
      %s = arith.addf %a, %a : f16
      memref.store %s, %x[%tid] : memref<16xf16>
      gpu.return
    }
  }
}
