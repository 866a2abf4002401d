// dnnf-cpu-buffer-arena (codegen/cpu/buffer_arena.py): a public function's static
// buffers, freed at its end, become views of one arena of bytes allocated and freed per
// call; a buffer dead before another's allocation lends it its bytes, the block freed
// most recently first; offsets are multiples of 64 bytes; the arena stays below 32 MiB.
// RUN: dnnf-opt %s --split-input-file --dnnf-cpu-buffer-arena | FileCheck %s

// A chain of kernels: each output reuses the input two kernels back.
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
// CHECK:         %[[O1:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         %[[O2:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         call @k2(%[[A]], %[[B]])
// CHECK:         %[[O3:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         call @k2(%[[B]], %[[C]])
// CHECK:         %[[O4:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[D:.*]] = memref.view %[[ARENA]][%[[O4]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         call @k2(%[[C]], %[[D]])
// CHECK-NOT:     memref.dealloc %[[A]]
// CHECK:         memref.dealloc %[[ARENA]] : memref<2048xi8>
// CHECK-NEXT:    return
func.func private @k1(memref<256xf32>)
func.func private @k2(memref<256xf32>, memref<256xf32>)
func.func @chain(%out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  call @k1(%a) : (memref<256xf32>) -> ()
  %b = memref.alloc() : memref<256xf32>
  call @k2(%a, %b) : (memref<256xf32>, memref<256xf32>) -> ()
  %c = memref.alloc() : memref<256xf32>
  call @k2(%b, %c) : (memref<256xf32>, memref<256xf32>) -> ()
  %d = memref.alloc() : memref<256xf32>
  call @k2(%c, %d) : (memref<256xf32>, memref<256xf32>) -> ()
  call @k2(%d, %out) : (memref<256xf32>, memref<256xf32>) -> ()
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<256xf32>
  memref.dealloc %d : memref<256xf32>
  return
}

// -----

// Hot first: %x's block (offset 0) was freed before %z's (offset 2048); %q, allocated
// after both, takes %z's, not the lowest. %p (100 floats, 400 bytes) takes the start of
// %x's, rounded up to 448 bytes: a 64-byte boundary for whatever comes after it.
// CHECK-LABEL: func.func @hot_first(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3072xi8>
// CHECK:         %[[O1:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[X:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<3072xi8> to memref<256xf32>
// CHECK:         %[[O2:.*]] = arith.constant 2048 : index
// CHECK-NEXT:    %[[Z:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<3072xi8> to memref<256xf32>
// CHECK:         call @k3(%[[X]], %{{.*}}, %[[Z]])
// CHECK:         %[[O3:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[P:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<3072xi8> to memref<100xf32>
// CHECK:         call @k3p(%[[Z]], %{{.*}}, %[[P]])
// CHECK:         %[[O4:.*]] = arith.constant 2048 : index
// CHECK-NEXT:    %[[Q:.*]] = memref.view %[[ARENA]][%[[O4]]][] : memref<3072xi8> to memref<16xf32>
// CHECK:         call @k4(%{{.*}}, %[[P]], %[[Q]], %{{.*}})
func.func private @k3(memref<256xf32>, memref<256xf32>, memref<256xf32>)
func.func private @k3p(memref<256xf32>, memref<256xf32>, memref<100xf32>)
func.func private @k4(memref<256xf32>, memref<100xf32>, memref<16xf32>, memref<16xf32>)
func.func @hot_first(%out: memref<16xf32>) {
  %x = memref.alloc() : memref<256xf32>
  %y = memref.alloc() : memref<256xf32>
  %z = memref.alloc() : memref<256xf32>
  call @k3(%x, %y, %z) : (memref<256xf32>, memref<256xf32>, memref<256xf32>) -> ()
  %p = memref.alloc() : memref<100xf32>
  call @k3p(%z, %y, %p) : (memref<256xf32>, memref<256xf32>, memref<100xf32>) -> ()
  %q = memref.alloc() : memref<16xf32>
  call @k4(%y, %p, %q, %out) : (memref<256xf32>, memref<100xf32>, memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %x : memref<256xf32>
  memref.dealloc %y : memref<256xf32>
  memref.dealloc %z : memref<256xf32>
  memref.dealloc %p : memref<100xf32>
  memref.dealloc %q : memref<16xf32>
  return
}

// -----

// A buffer a loop carries (iter_args) lives as long as the loop's result: %b, allocated
// after the loop, must not take %a's bytes, which %r still reads. %c, after the last
// read of %r, may.
// CHECK-LABEL: func.func @loop_result(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
// CHECK:         %[[O1:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         scf.for
// CHECK:         %[[O2:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         call @k2(%{{.*}}, %[[B]])
// CHECK:         %[[O3:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         call @k2(%[[B]], %[[C]])
func.func private @k1(memref<256xf32>)
func.func private @k2(memref<256xf32>, memref<256xf32>)
func.func @loop_result(%out: memref<256xf32>, %steps: index, %one: index) {
  %a = memref.alloc() : memref<256xf32>
  %r = scf.for %i = %one to %steps step %one iter_args(%m = %a) -> (memref<256xf32>) {
    func.call @k1(%m) : (memref<256xf32>) -> ()
    scf.yield %m : memref<256xf32>
  }
  %b = memref.alloc() : memref<256xf32>
  call @k2(%r, %b) : (memref<256xf32>, memref<256xf32>) -> ()
  %c = memref.alloc() : memref<256xf32>
  call @k2(%b, %c) : (memref<256xf32>, memref<256xf32>) -> ()
  call @k2(%c, %out) : (memref<256xf32>, memref<256xf32>) -> ()
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<256xf32>
  return
}

// -----

// What keeps its own allocation: a buffer with a dynamic size, one of i1 (not whole
// bytes), one returned, one the function does not free, one freed inside a branch, and
// one that would grow the arena to 32 MiB or more (%big2: %big1 and it are live together).
// CHECK-LABEL: func.func @kept(
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<20971520xi8>
// CHECK-DAG:     memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-DAG:     memref.alloc() : memref<64xi1>
// CHECK-DAG:     memref.alloc() : memref<16xf32>
// CHECK-DAG:     memref.alloc() : memref<32xf32>
// CHECK-DAG:     memref.alloc() : memref<48xf32>
// CHECK-DAG:     memref.alloc() : memref<5242880xf32>
// CHECK-DAG:     memref.view %{{.*}}[%{{.*}}][] : memref<20971520xi8> to memref<5242880xf32>
// CHECK-DAG:     memref.view %{{.*}}[%{{.*}}][] : memref<20971520xi8> to memref<8xf32>
func.func private @use(memref<?xf32>, memref<64xi1>, memref<16xf32>, memref<32xf32>, memref<48xf32>,
                       memref<5242880xf32>, memref<5242880xf32>)
func.func private @use8(memref<8xf32>)
func.func @kept(%n: index, %flag: i1) -> (memref<16xf32>, memref<32xf32>) {
  %dynamic = memref.alloc(%n) : memref<?xf32>
  %bits = memref.alloc() : memref<64xi1>
  %returned = memref.alloc() : memref<16xf32>
  %kept = memref.alloc() : memref<32xf32>
  %branch = memref.alloc() : memref<48xf32>
  %big1 = memref.alloc() : memref<5242880xf32>
  %big2 = memref.alloc() : memref<5242880xf32>
  call @use(%dynamic, %bits, %returned, %kept, %branch, %big1, %big2)
    : (memref<?xf32>, memref<64xi1>, memref<16xf32>, memref<32xf32>, memref<48xf32>, memref<5242880xf32>,
       memref<5242880xf32>) -> ()
  %small = memref.alloc() : memref<8xf32>
  call @use8(%small) : (memref<8xf32>) -> ()
  scf.if %flag {
    memref.dealloc %branch : memref<48xf32>
  }
  memref.dealloc %dynamic : memref<?xf32>
  memref.dealloc %bits : memref<64xi1>
  memref.dealloc %big1 : memref<5242880xf32>
  memref.dealloc %big2 : memref<5242880xf32>
  memref.dealloc %small : memref<8xf32>
  return %returned, %kept : memref<16xf32>, memref<32xf32>
}

// -----

// A private (kernel) function is left alone, and so is a public one with fewer than two
// buffers to place.
// CHECK-LABEL: func.func private @kernel(
// CHECK:         memref.alloc() : memref<256xf32>
// CHECK:         memref.alloc() : memref<256xf32>
// CHECK-LABEL: func.func @single(
// CHECK:         memref.alloc() : memref<256xf32>
// CHECK-NOT:     memref.view
func.func private @k1(memref<256xf32>)
func.func private @kernel() {
  %a = memref.alloc() : memref<256xf32>
  call @k1(%a) : (memref<256xf32>) -> ()
  %b = memref.alloc() : memref<256xf32>
  call @k1(%b) : (memref<256xf32>) -> ()
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<256xf32>
  return
}
func.func @single() {
  %a = memref.alloc() : memref<256xf32>
  call @k1(%a) : (memref<256xf32>) -> ()
  memref.dealloc %a : memref<256xf32>
  return
}
