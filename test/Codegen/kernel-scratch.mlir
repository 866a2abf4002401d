// dnnf-cpu-kernel-scratch (codegen/cpu/kernel_scratch.py): a kernel's static scratch
// buffers of at least 1 MiB, freed in its entry block, become arguments; each call in a
// public function's entry block allocates them just before it and frees them right
// after, where dnnf-cpu-buffer-arena then places them. Smaller buffers, buffers the
// kernel returns or does not free, and kernels called from a loop stay as they are.
// RUN: dnnf-opt %s --split-input-file --dnnf-cpu-kernel-scratch | FileCheck %s
// RUN: dnnf-opt %s --split-input-file --dnnf-cpu-kernel-scratch --dnnf-cpu-buffer-arena | FileCheck %s --check-prefix=ARENA

// Two calls of one kernel: its 2 MiB buffer moves to both, its 1 KiB one stays.
// CHECK-LABEL: func.func private @kernel(
// CHECK-SAME:    %{{.*}}: memref<256xf32>, %{{.*}}: memref<256xf32>, %[[ARG:.*]]: memref<524288xf32>)
// CHECK:         %[[SMALL:.*]] = memref.alloc() : memref<256xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         memref.store %{{.*}}, %[[ARG]][%{{.*}}] : memref<524288xf32>
// CHECK:         memref.dealloc %[[SMALL]] : memref<256xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
// CHECK-LABEL: func.func @twice(
// CHECK:         %[[S1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<524288xf32>
// CHECK-NEXT:    call @kernel(%{{.*}}, %{{.*}}, %[[S1]])
// CHECK-NEXT:    memref.dealloc %[[S1]] : memref<524288xf32>
// CHECK-NEXT:    %[[S2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<524288xf32>
// CHECK-NEXT:    call @kernel(%{{.*}}, %{{.*}}, %[[S2]])
// CHECK-NEXT:    memref.dealloc %[[S2]] : memref<524288xf32>

// In the arena, the second call's scratch takes the bytes the first call's freed.
// ARENA-LABEL: func.func @twice(
// ARENA:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2099200xi8>
// ARENA-NOT:     memref.alloc
// ARENA:         %[[O1:.*]] = arith.constant 2048 : index
// ARENA-NEXT:    %[[S1:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<2099200xi8> to memref<524288xf32>
// ARENA-NEXT:    call @kernel(%{{.*}}, %{{.*}}, %[[S1]])
// ARENA-NEXT:    %[[O2:.*]] = arith.constant 2048 : index
// ARENA-NEXT:    %[[S2:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<2099200xi8> to memref<524288xf32>
// ARENA-NEXT:    call @kernel(%{{.*}}, %{{.*}}, %[[S2]])
// ARENA-NEXT:    memref.dealloc %[[ARENA]]
func.func private @producer(memref<256xf32>)
func.func private @kernel(%in: memref<256xf32>, %out: memref<256xf32>) attributes {dnnf.kernel} {
  %c0 = arith.constant 0 : index
  %x = memref.load %in[%c0] : memref<256xf32>
  %small = memref.alloc() : memref<256xf32>
  %big = memref.alloc() {alignment = 64 : i64} : memref<524288xf32>
  memref.store %x, %small[%c0] : memref<256xf32>
  memref.store %x, %big[%c0] : memref<524288xf32>
  %y = memref.load %big[%c0] : memref<524288xf32>
  memref.store %y, %out[%c0] : memref<256xf32>
  memref.dealloc %small : memref<256xf32>
  memref.dealloc %big : memref<524288xf32>
  return
}
func.func @twice(%out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  call @producer(%a) : (memref<256xf32>) -> ()
  %b = memref.alloc() : memref<256xf32>
  call @kernel(%a, %b) : (memref<256xf32>, memref<256xf32>) -> ()
  call @kernel(%b, %out) : (memref<256xf32>, memref<256xf32>) -> ()
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<256xf32>
  return
}

// -----

// A kernel called in a loop keeps its scratch: the call is not in the entry block.
// CHECK-LABEL: func.func private @step(
// CHECK-SAME:    %{{.*}}: memref<256xf32>)
// CHECK:         memref.alloc() : memref<262144xf32>
// CHECK:         memref.dealloc
// CHECK-LABEL: func.func @in_loop(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK-NEXT:      call @step(%{{.*}}) : (memref<256xf32>) -> ()
func.func private @step(%state: memref<256xf32>) attributes {dnnf.kernel} {
  %c0 = arith.constant 0 : index
  %x = memref.load %state[%c0] : memref<256xf32>
  %big = memref.alloc() : memref<262144xf32>
  memref.store %x, %big[%c0] : memref<262144xf32>
  %y = memref.load %big[%c0] : memref<262144xf32>
  memref.store %y, %state[%c0] : memref<256xf32>
  memref.dealloc %big : memref<262144xf32>
  return
}
func.func @in_loop(%state: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    func.call @step(%state) : (memref<256xf32>) -> ()
  }
  return
}

// -----

// A buffer the kernel returns, or does not free, is not scratch.
// CHECK-LABEL: func.func private @returns() -> memref<262144xf32>
// CHECK:         memref.alloc
// CHECK-LABEL: func.func private @leaks()
// CHECK:         memref.alloc
// CHECK-LABEL: func.func @kept(
// CHECK-NEXT:    %{{.*}} = call @returns() : () -> memref<262144xf32>
// CHECK-NEXT:    call @leaks() : () -> ()
// CHECK-NEXT:    return
func.func private @returns() -> memref<262144xf32> attributes {dnnf.kernel} {
  %big = memref.alloc() : memref<262144xf32>
  return %big : memref<262144xf32>
}
func.func private @leaks() attributes {dnnf.kernel} {
  %big = memref.alloc() : memref<262144xf32>
  return
}
func.func @kept() -> memref<262144xf32> {
  %r = call @returns() : () -> memref<262144xf32>
  call @leaks() : () -> ()
  return %r : memref<262144xf32>
}
