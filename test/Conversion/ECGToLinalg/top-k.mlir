// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The loops bufferize in place: the two results allocated once, nothing inside the loops.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF

// TopK along the middle axis: one loop over the 12 rows (outer x inner), the row's 5
// slots emptied (index -1), one pass over its 17 elements (a block of 16, then 1); an
// element that beats the 5th slot (or finds it empty) is inserted by one more loop over
// the slots, which shifts down the slots it beats (the slot before carried, with
// whether the entry went in yet: two selects a result). k appears only as a loop bound:
// the IR does not grow with it.
// CHECK-LABEL: func.func @top_k_middle_axis
// CHECK: %[[ROWS:.*]] = arith.constant 12 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ROWS]] {{.*}} -> (tensor<3x5x4xf32>, tensor<3x5x4xi64>)
// CHECK: scf.for
// CHECK: tensor.insert %{{.*}} : tensor<3x5x4xi64>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: scf.for
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<3x17x4xf32>
// CHECK: arith.cmpf ogt
// CHECK: scf.if
// CHECK: scf.for {{.*}} -> (tensor<3x5x4xf32>, tensor<3x5x4xi64>, f32, i64, i1)
// CHECK-COUNT-4: arith.select
// CHECK: } else {
// BUF-LABEL: func.func @top_k_middle_axis
// BUF-COUNT-2: memref.alloc
// BUF-NOT: memref.alloc
// BUF: return
func.func @top_k_middle_axis(%x: tensor<3x17x4xf32>) -> (tensor<3x5x4xf32>, tensor<3x5x4xi64>) {
  %0:2 = "ecg.top_k"(%x) {axis = 1 : i64, k = 5 : i64, largest = 1 : i64} : (tensor<3x17x4xf32>) -> (tensor<3x5x4xf32>, tensor<3x5x4xi64>)
  return %0#0, %0#1 : tensor<3x5x4xf32>, tensor<3x5x4xi64>
}

// -----

// The smallest of integers: signed comparisons, no NaN test.
// CHECK-LABEL: func.func @top_k_smallest_ints
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NOT: arith.cmpf
func.func @top_k_smallest_ints(%x: tensor<6x40xi32>) -> (tensor<6x40xi32>, tensor<6x40xi64>) {
  %0:2 = "ecg.top_k"(%x) {axis = -1 : i64, k = 40 : i64, largest = 0 : i64} : (tensor<6x40xi32>) -> (tensor<6x40xi32>, tensor<6x40xi64>)
  return %0#0, %0#1 : tensor<6x40xi32>, tensor<6x40xi64>
}

// -----

// A row of 40: two blocks of 16, each compared with the k-th value without a branch
// (unordered: NaN gets through to the exact test), the element loop (16 trips from the
// block's first: every loop's trip count a constant) only where some element may enter;
// then the last 8 elements one by one.
// CHECK-LABEL: func.func @top_k_blocks
// CHECK: %[[END:.*]] = arith.constant 32 : index
// CHECK: %[[BLOCK:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[BEGIN:.*]] = %{{.*}} to %[[END]] step %[[BLOCK]] iter_args({{.*}}, %[[KTH:.*]] = %{{.*}}, %{{.*}} = %true)
// CHECK-COUNT-16: arith.cmpf ugt, %{{.*}}, %[[KTH]] : f32
// CHECK: scf.if
// CHECK: scf.for %[[LANE:.*]] = %{{.*}} to %{{.*}} step
// CHECK: arith.addi %[[BEGIN]], %[[LANE]] : index
// CHECK: %[[LAST:.*]] = arith.constant 32 : index
// CHECK: %[[TAIL:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[AT:.*]] = %{{.*}} to %[[TAIL]] step
// CHECK: arith.addi %[[LAST]], %[[AT]] : index
func.func @top_k_blocks(%x: tensor<2x40xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %0:2 = "ecg.top_k"(%x) {axis = -1 : i64, k = 3 : i64, largest = 1 : i64} : (tensor<2x40xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// From 33 slots on, a heap, the worst entry at slot 0: an element that beats it takes its
// place and sifts down, a loop of the heap's depth (5 for 40) that moves the worse child up
// while the entry beats it (a child past the heap read at slot 39 at most, not taken);
// at the end k - 1 steps move the worst to the last free slot and sift again: sorted.
// CHECK-LABEL: func.func @top_k_heap
// CHECK: arith.constant 0 : index
// CHECK: scf.if
// CHECK: %[[DEPTH:.*]] = arith.constant 5 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[DEPTH]] step %{{.*}} iter_args({{.*}}) -> (tensor<2x40x1xf32>, tensor<2x40x1xi64>, index, i1)
// CHECK: %[[LAST:.*]] = arith.constant 39 : index
// CHECK: arith.minui %{{.*}}, %[[LAST]] : index
// CHECK: arith.cmpi ult
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{[^,]*}}, %{{[^,]*}}) -> (tensor<2x40x1xf32>, tensor<2x40x1xi64>) {
// CHECK: arith.subi %{{.*}}, %[[STEP]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<2x40x1xf32>, tensor<2x40x1xi64>, index, i1)
func.func @top_k_heap(%x: tensor<2x100xf32>) -> (tensor<2x40xf32>, tensor<2x40xi64>) {
  %0:2 = "ecg.top_k"(%x) {axis = 1 : i64, k = 40 : i64, largest = 1 : i64} : (tensor<2x100xf32>) -> (tensor<2x40xf32>, tensor<2x40xi64>)
  return %0#0, %0#1 : tensor<2x40xf32>, tensor<2x40xi64>
}
