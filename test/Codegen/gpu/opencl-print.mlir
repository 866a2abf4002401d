// The OpenCL C printer (codegen/gpu/opencl/printer.py), one op family per kernel: the
// mapped gpu.modules the OpenCL backend prints at its stage "opencl", translated by
// `python -m dnnf_mlir.codegen.gpu.opencl`. Buffers come as (buffer, byte offset)
// pairs; every value is a const local; ONNX's NaN semantics are kept.
// (The last kernel is an error: exit status 1.)
// RUN: not %PYTHON -m dnnf_mlir.codegen.gpu.opencl %s --split-input-file | FileCheck %s

// CHECK-LABEL: void integers(__global uchar *a0_buffer, ulong a0_offset, __global uchar *a1_buffer, ulong a1_offset, __global uchar *a2_buffer, ulong a2_offset) {
// CHECK-NEXT: __global int *a0 = (__global int *)(a0_buffer + a0_offset);
// CHECK-NEXT: __global long *a1 = (__global long *)(a1_buffer + a1_offset);
// CHECK-NEXT: __global uchar *a2 = (__global uchar *)(a2_buffer + a2_offset);
// CHECK: const long [[TID:v[0-9]+]] = (long)get_local_id(0);
// CHECK-NEXT: const long [[GID:v[0-9]+]] = (long)get_group_id(1);
// CHECK-NEXT: const long [[I:v[0-9]+]] = [[TID]] + [[GID]];
// CHECK-NEXT: const int [[X:v[0-9]+]] = (int)[[I]];
// CHECK-NEXT: const int [[A:v[0-9]+]] = [[X]] * [[C3:v[0-9]+]];
// CHECK-NEXT: const int [[B:v[0-9]+]] = [[A]] / [[CM7:v[0-9]+]];
// CHECK-NEXT: const int [[C:v[0-9]+]] = (int)((uint)[[A]] % (uint)[[C3]]);
// CHECK-NEXT: const int [[D:v[0-9]+]] = (int)((uint)[[CM7]] >> (uint)[[C3]]);
// CHECK-NEXT: const int [[E:v[0-9]+]] = [[B]] ^ [[D]];
// CHECK-NEXT: const bool [[LT:v[0-9]+]] = (uint)[[E]] < (uint)[[C]];
// CHECK-NEXT: const bool [[GE:v[0-9]+]] = [[E]] >= [[C]];
// CHECK-NEXT: const int [[M:v[0-9]+]] = (int)max((uint)[[E]], (uint)[[C]]);
// CHECK-NEXT: const int [[S:v[0-9]+]] = [[LT]] ? [[M]] : [[E]];
// CHECK-NEXT: const long [[W:v[0-9]+]] = (long)(uint)[[S]];
// CHECK-NEXT: const int [[N:v[0-9]+]] = -(int)[[GE]];
// CHECK-NEXT: const int [[T:v[0-9]+]] = [[S]] + [[N]];
// CHECK-NEXT: a0[[[I]]] = [[T]];
// CHECK-NEXT: a1[[[I]]] = [[W]];
// CHECK-NEXT: a2[[[I]]] = (uchar)[[LT]];
// CHECK-NEXT: return;
// Integer arithmetic, comparisons, selects and casts; the work-item's ids.
module attributes {gpu.container_module} {
  gpu.module @integers {
    gpu.func @integers(%out: memref<64xi32>, %wide: memref<64xi64>, %flags: memref<64xi1>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c3 = arith.constant 3 : i32
      %cm7 = arith.constant -7 : i32
      %tid = gpu.thread_id x
      %gid = gpu.block_id y
      %i = arith.addi %tid, %gid : index
      %x = arith.index_cast %i : index to i32
      %a = arith.muli %x, %c3 : i32
      %b = arith.divsi %a, %cm7 : i32
      %c = arith.remui %a, %c3 : i32
      %d = arith.shrui %cm7, %c3 : i32
      %e = arith.xori %b, %d : i32
      %lt = arith.cmpi ult, %e, %c : i32
      %ge = arith.cmpi sge, %e, %c : i32
      %m = arith.maxui %e, %c : i32
      %s = arith.select %lt, %m, %e : i32
      %w = arith.extui %s : i32 to i64
      %n = arith.extsi %ge : i1 to i32
      %t = arith.addi %s, %n : i32
      memref.store %t, %out[%i] : memref<64xi32>
      memref.store %w, %wide[%i] : memref<64xi64>
      memref.store %lt, %flags[%i] : memref<64xi1>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: void floats(
// CHECK: const float [[ONE:v[0-9]+]] = 0x1.8000000000000p+0f;
// CHECK-NEXT: const float [[INF:v[0-9]+]] = INFINITY;
// CHECK-NEXT: const float [[A:v[0-9]+]] = a0[[[TID:v[0-9]+]]];
// CHECK-NEXT: const float [[MX:v[0-9]+]] = select(select(fmax([[A]], [[ONE]]), [[ONE]], isnan([[ONE]])), [[A]], isnan([[A]]));
// CHECK-NEXT: const float [[MN:v[0-9]+]] = select(select(fmin([[MX]], [[INF]]), [[INF]], isnan([[INF]])), [[MX]], isnan([[MX]]));
// CHECK-NEXT: const float [[NM:v[0-9]+]] = fmax([[MN]], [[ONE]]);
// CHECK-NEXT: const float [[EXP:v[0-9]+]] = exp([[NM]]);
// CHECK-NEXT: const float [[TANH:v[0-9]+]] = tanh([[EXP]]);
// CHECK-NEXT: const float [[F:v[0-9]+]] = fma([[TANH]], [[A]], [[ONE]]);
// CHECK-NEXT: const float [[NEG:v[0-9]+]] = -[[F]];
// CHECK-NEXT: const float [[R:v[0-9]+]] = fmod([[NEG]], [[ONE]]);
// CHECK-NEXT: const bool [[UGT:v[0-9]+]] = !([[R]] <= [[A]]);
// CHECK-NEXT: const bool [[OEQ:v[0-9]+]] = [[R]] == [[A]];
// CHECK-NEXT: const bool [[UEQ:v[0-9]+]] = !(([[R]] < [[A]]) || ([[R]] > [[A]]));
// CHECK-NEXT: const bool [[OR:v[0-9]+]] = [[UGT]] | [[OEQ]];
// CHECK-NEXT: const bool [[AND:v[0-9]+]] = [[OR]] & [[UEQ]];
// CHECK-NEXT: const float [[V:v[0-9]+]] = [[AND]] ? [[R]] : [[A]];
// CHECK-NEXT: a1[[[TID]]] = [[V]];
// CHECK-NEXT: const int [[INT:v[0-9]+]] = (int)[[V]];
// CHECK-NEXT: a2[[[TID]]] = [[INT]];
// -----

// Floats: NaN-propagating maximum and minimum (not C's fmax / fmin, which drop a NaN),
// the maxnum / minnum forms that do drop it, math calls, unordered predicates, casts.
module attributes {gpu.container_module} {
  gpu.module @floats {
    gpu.func @floats(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xi32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %tid = gpu.thread_id x
      %one = arith.constant 1.5 : f32
      %inf = arith.constant 0x7F800000 : f32
      %a = memref.load %x[%tid] : memref<64xf32>
      %mx = arith.maximumf %a, %one : f32
      %mn = arith.minimumf %mx, %inf : f32
      %nm = arith.maxnumf %mn, %one : f32
      %e = math.exp %nm : f32
      %t = math.tanh %e : f32
      %f = math.fma %t, %a, %one : f32
      %n = arith.negf %f : f32
      %r = arith.remf %n, %one : f32
      %u = arith.cmpf ugt, %r, %a : f32
      %o = arith.cmpf oeq, %r, %a : f32
      %ue = arith.cmpf ueq, %r, %a : f32
      %b = arith.ori %u, %o : i1
      %c = arith.andi %b, %ue : i1
      %v = arith.select %c, %r, %a : f32
      memref.store %v, %y[%tid] : memref<64xf32>
      %i = arith.fptosi %v : f32 to i32
      memref.store %i, %z[%tid] : memref<64xi32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: void loops(
// CHECK: float [[P:r[0-9]+]];
// CHECK-NEXT: [[P]] = [[ZERO:v[0-9]+]];
// CHECK-NEXT: float [[Q:r[0-9]+]];
// CHECK-NEXT: [[Q]] = [[ZERO]];
// CHECK-NEXT: for (long [[K:i[0-9]+]] = {{v[0-9]+}}; [[K]] < {{v[0-9]+}}; [[K]] += {{v[0-9]+}}) {
// CHECK-NEXT: const float [[A:v[0-9]+]] = a0[[[TID:v[0-9]+]] * 16 + [[K]]];
// CHECK-NEXT: const float [[S:v[0-9]+]] = [[P]] + [[A]];
// CHECK-NEXT: const float [[T0:t[0-9_]+]] = [[Q]];
// CHECK-NEXT: const float [[T1:t[0-9_]+]] = [[S]];
// CHECK-NEXT: [[P]] = [[T0]];
// CHECK-NEXT: [[Q]] = [[T1]];
// CHECK-NEXT: }
// CHECK-NEXT: const bool [[POS:v[0-9]+]] = [[P]] > [[ZERO]];
// CHECK-NEXT: float [[R:r[0-9]+]];
// CHECK-NEXT: if ([[POS]]) {
// CHECK-NEXT: [[R]] = [[P]];
// CHECK-NEXT: }
// CHECK-NEXT: else {
// CHECK-NEXT: const float [[M:v[0-9]+]] = [[Q]] * [[Q]];
// CHECK-NEXT: [[R]] = [[M]];
// CHECK-NEXT: }
// CHECK-NEXT: a1[[[TID]]] = [[R]];

// Loops carrying values (assigned together at the yield: here they swap), a branch
// yielding one.
module attributes {gpu.container_module} {
  gpu.module @loops {
    gpu.func @loops(%x: memref<8x16xf32>, %y: memref<8xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %sum:2 = scf.for %k = %c0 to %c16 step %c1 iter_args(%p = %zero, %q = %zero) -> (f32, f32) {
        %a = memref.load %x[%tid, %k] : memref<8x16xf32>
        %s = arith.addf %p, %a : f32
        scf.yield %q, %s : f32, f32
      }
      %pos = arith.cmpf ogt, %sum#0, %zero : f32
      %r = scf.if %pos -> (f32) {
        scf.yield %sum#0 : f32
      } else {
        %m = arith.mulf %sum#1, %sum#1 : f32
        scf.yield %m : f32
      }
      memref.store %r, %y[%tid] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: void memory(
// CHECK: __local float [[SHARED:m[0-9]+]][32];
// CHECK: const long [[TID:v[0-9]+]] = (long)get_local_id(0);
// CHECK-NEXT: const long [[ROW:v[0-9]+]] = (long)get_group_id(0);
// CHECK-NEXT: float [[PRIVATE:m[0-9]+]][2];
// CHECK-NEXT: const float [[A:v[0-9]+]] = a0[32 + [[C0:v[0-9]+]] * 32 + [[TID]]];
// CHECK-NEXT: [[SHARED]][[[TID]]] = [[A]];
// CHECK-NEXT: barrier(CLK_LOCAL_MEM_FENCE);
// CHECK-NEXT: const float [[B:v[0-9]+]] = [[SHARED]][[[C0]]];
// CHECK-NEXT: [[PRIVATE]][[[C1:v[0-9]+]]] = [[B]];
// CHECK-NEXT: const float [[C:v[0-9]+]] = [[PRIVATE]][[[C1]]];
// CHECK-NEXT: a1[([[ROW]] * 32) + [[C0]] * 32 + [[TID]]] = [[C]];

// Views as offsets into their buffer (static and dynamic), a work-item's private array,
// a workgroup's shared array (declared at the kernel's scope) and its barrier.
module attributes {gpu.container_module} {
  gpu.module @memory {
    gpu.func @memory(%x: memref<4x32xf32>, %y: memref<4x32xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tid = gpu.thread_id x
      %row = gpu.block_id x
      %view = memref.subview %x[1, 0] [3, 32] [1, 1] : memref<4x32xf32> to memref<3x32xf32, strided<[32, 1], offset: 32>>
      %tile = memref.subview %y[%row, 0] [1, 32] [1, 1] : memref<4x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %shared = memref.alloc() : memref<32xf32, #spirv.storage_class<Workgroup>>
      %private = memref.alloca() : memref<2xf32, #spirv.storage_class<Function>>
      %a = memref.load %view[%c0, %tid] : memref<3x32xf32, strided<[32, 1], offset: 32>>
      memref.store %a, %shared[%tid] : memref<32xf32, #spirv.storage_class<Workgroup>>
      gpu.barrier
      %b = memref.load %shared[%c0] : memref<32xf32, #spirv.storage_class<Workgroup>>
      memref.store %b, %private[%c1] : memref<2xf32, #spirv.storage_class<Function>>
      %c = memref.load %private[%c1] : memref<2xf32, #spirv.storage_class<Function>>
      memref.store %c, %tile[%c0, %tid] : memref<1x32xf32, strided<[32, 1], offset: ?>>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: void vectors(
// CHECK-NEXT: __global float4 *a0 = (__global float4 *)(a0_buffer + a0_offset);
// CHECK-NEXT: __global float *a1 = (__global float *)(a1_buffer + a1_offset);
// CHECK: const float4 [[HALF:v[0-9]+]] = (float4)(0x1.0000000000000p-1f);
// CHECK-NEXT: const float4 [[STEPS:v[0-9]+]] = (float4)(0x0.0p+0f, 0x1.0000000000000p+0f, 0x1.0000000000000p+1f, 0x1.8000000000000p+1f);
// CHECK-NEXT: const long [[TID:v[0-9]+]] = (long)get_local_id(0);
// CHECK-NEXT: const long [[LANE:v[0-9]+]] = (long)((ulong)[[TID]] % (ulong)[[C4:v[0-9]+]]);
// CHECK-NEXT: const float4 [[A:v[0-9]+]] = a0[[[TID]]];
// CHECK-NEXT: const long [[I:v[0-9]+]] = [[TID]] * [[C4]];
// CHECK-NEXT: const float4 [[B:v[0-9]+]] = vload4(0, &a1[[[I]]]);
// CHECK-NEXT: const float4 [[S:v[0-9]+]] = [[A]] + [[B]];
// CHECK-NEXT: const float4 [[M:v[0-9]+]] = select(select(fmax([[S]], [[HALF]]), [[HALF]], isnan([[HALF]])), [[S]], isnan([[S]]));
// CHECK-NEXT: const int4 [[BIG:v[0-9]+]] = convert_int4([[M]] > [[STEPS]]);
// CHECK-NEXT: const bool [[T:v[0-9]+]] = ([[BIG]].s2 != 0);
// CHECK-NEXT: int4 [[FLAGS:w[0-9]+]];
// CHECK-NEXT: [[FLAGS]] = [[BIG]];
// CHECK-NEXT: ((int *)&[[FLAGS]])[[[LANE]]] = ([[T]] ? -1 : 0);
// CHECK-NEXT: const float4 [[F:v[0-9]+]] = convert_float4(-[[FLAGS]]);
// CHECK-NEXT: const float [[K:v[0-9]+]] = ((const float *)&[[F]])[[[LANE]]];
// CHECK-NEXT: const float4 [[SPLAT:v[0-9]+]] = (float4)([[K]]);
// CHECK-NEXT: const float4 [[W:v[0-9]+]] = fma([[F]], [[SPLAT]], [[M]]);
// CHECK-NEXT: vstore4([[W]], 0, &a1[[[I]]]);
// CHECK-NEXT: const float [[SUM:v[0-9]+]] = [[W]].s0 + [[W]].s1 + [[W]].s2 + [[W]].s3;
// CHECK-NEXT: a2[[[TID]]] = [[SUM]];

// Vectors: buffers of vec4 (plain indexing), vector loads and stores of a scalar buffer
// (vload4 / vstore4), splats, lanes (static and dynamic), boolean lanes (-1 in OpenCL
// C), a sum of lanes.
module attributes {gpu.container_module} {
  gpu.module @vectors {
    gpu.func @vectors(%x: memref<16xvector<4xf32>>, %y: memref<64xf32>, %z: memref<16xf32>) kernel attributes {known_block_size = array<i32: 16, 1, 1>} {
      %c4 = arith.constant 4 : index
      %half = arith.constant dense<0.5> : vector<4xf32>
      %steps = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : vector<4xf32>
      %tid = gpu.thread_id x
      %lane = arith.remui %tid, %c4 : index
      %a = memref.load %x[%tid] : memref<16xvector<4xf32>>
      %i = arith.muli %tid, %c4 : index
      %b = vector.load %y[%i] : memref<64xf32>, vector<4xf32>
      %s = arith.addf %a, %b : vector<4xf32>
      %m = arith.maximumf %s, %half : vector<4xf32>
      %big = arith.cmpf ogt, %m, %steps : vector<4xf32>
      %t = vector.extract %big[2] : i1 from vector<4xi1>
      %flags = vector.insert %t, %big[%lane] : i1 into vector<4xi1>
      %f = arith.uitofp %flags : vector<4xi1> to vector<4xf32>
      %k = vector.extract %f[%lane] : f32 from vector<4xf32>
      %splat = vector.broadcast %k : f32 to vector<4xf32>
      %w = vector.fma %f, %splat, %m : vector<4xf32>
      vector.store %w, %y[%i] : memref<64xf32>, vector<4xf32>
      %sum = vector.reduction <add>, %w : vector<4xf32> into f32
      memref.store %sum, %z[%tid] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: void lanes(
// CHECK: const float4 [[A:v[0-9]+]] = a0[[[TID:v[0-9]+]]];
// CHECK-NEXT: const float [[E0:v[0-9]+]] = [[A]].s0;
// CHECK-NEXT: const float [[E1:v[0-9]+]] = [[A]].s1;
// CHECK-NEXT: const float [[E2:v[0-9]+]] = [[A]].s2;
// CHECK-NEXT: const float [[E3:v[0-9]+]] = [[A]].s3;
// CHECK-NEXT: const float [[S:v[0-9]+]] = [[E0]] + [[E3]];
// CHECK-NEXT: a1[[[TID]]] = [[S]];

// Every lane of a vector as a scalar (vector.to_elements, what a one-row matmul thread
// unrolls its stepped product into).
module attributes {gpu.container_module} {
  gpu.module @lanes {
    gpu.func @lanes(%x: memref<16xvector<4xf32>>, %z: memref<16xf32>) kernel attributes {known_block_size = array<i32: 16, 1, 1>} {
      %tid = gpu.thread_id x
      %a = memref.load %x[%tid] : memref<16xvector<4xf32>>
      %e:4 = vector.to_elements %a : vector<4xf32>
      %s = arith.addf %e#0, %e#3 : f32
      memref.store %s, %z[%tid] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// CHECK: error: OpenCL C: kernel unknown: no OpenCL C for this op (math.ctlz)

// An op the printer has no rule for: an error naming it and the kernel.
module attributes {gpu.container_module} {
  gpu.module @unknown {
    gpu.func @unknown(%x: memref<16xi32>) kernel attributes {known_block_size = array<i32: 16, 1, 1>} {
      %tid = gpu.thread_id x
      %a = memref.load %x[%tid] : memref<16xi32>
      %b = math.ctlz %a : i32
      memref.store %b, %x[%tid] : memref<16xi32>
      gpu.return
    }
  }
}
