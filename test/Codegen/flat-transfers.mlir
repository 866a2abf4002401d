// dnnf-codegen-map-to-hardware (CPU) flattens the contiguous n-D vector transfers of a
// function into 1-D ones (codegen/cpu/flat_transfers.py, lowering/cpu/vector-lowering.mlir)
// unless one of its loops carries a vector of several one-element rows: flattening would
// reshape that accumulator on every iteration of the loop.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-map-to-hardware=cpu=x86-64-v3 | FileCheck %s

// 16 rows of 9 contiguous floats: one load and one store of 144.
// CHECK-LABEL: func.func @contiguous_rows(
// CHECK-SAME:    attributes {dnnf.flatten_transfers}
// CHECK:         %[[IN:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<16x9xf32> into memref<144xf32>
// CHECK:         vector.load %[[IN]][%{{.*}}] : memref<144xf32>, vector<144xf32>
// CHECK:         %[[OUT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<16x9xf32> into memref<144xf32>
// CHECK:         vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<144xf32>, vector<144xf32>
func.func @contiguous_rows(%in: memref<16x9xf32>, %out: memref<16x9xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x9xf32>, vector<16x9xf32>
  %s = arith.addf %v, %v : vector<16x9xf32>
  vector.transfer_write %s, %out[%c0, %c0] {in_bounds = [true, true]} : vector<16x9xf32>, memref<16x9xf32>
  return
}

// -----

// A matrix-vector accumulator of 16 one-element rows stays 16x1 through its loop.
// CHECK-LABEL: func.func @unit_rows(
// CHECK-NOT:     dnnf.flatten_transfers
// CHECK-NOT:     vector<16xf32>
// CHECK:         scf.for {{.*}} -> (vector<16x1xf32>)
// CHECK-NOT:     vector<16xf32>
// CHECK:         return
func.func @unit_rows(%w: memref<16x48xf32>, %x: memref<48xf32>, %out: memref<16x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<16x1xf32>
  %sum = scf.for %k = %c0 to %c48 step %c1 iter_args(%acc = %zero) -> (vector<16x1xf32>) {
    %col = vector.transfer_read %w[%c0, %k], %pad {in_bounds = [true, true]} : memref<16x48xf32>, vector<16x1xf32>
    %xk = memref.load %x[%k] : memref<48xf32>
    %b = vector.broadcast %xk : f32 to vector<16x1xf32>
    %next = vector.fma %col, %b, %acc : vector<16x1xf32>
    scf.yield %next : vector<16x1xf32>
  }
  vector.transfer_write %sum, %out[%c0, %c0] {in_bounds = [true, true]} : vector<16x1xf32>, memref<16x1xf32>
  return
}

// -----

// A loop carrying one row of 16 (a unit dim in front) does not hold flattening back; the
// transposed read of a contiguous 2x8 block becomes an unpermuted read, flattened.
// CHECK-LABEL: func.func @row_accumulator(
// CHECK-SAME:    attributes {dnnf.flatten_transfers}
// CHECK:         %[[IN:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<8x2xf32> into memref<16xf32>
// CHECK:         vector.load %[[IN]][%{{.*}}] : memref<16xf32>, vector<16xf32>
// CHECK:         scf.for {{.*}} -> (vector<16xf32>)
// CHECK:         vector.store %{{.*}} : memref<1x16xf32>, vector<16xf32>
func.func @row_accumulator(%in: memref<8x2xf32>, %rows: memref<4x16xf32>, %out: memref<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.0 : f32
  %t = vector.transfer_read %in[%c0, %c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<8x2xf32>, vector<2x8xf32>
  %first = vector.shape_cast %t : vector<2x8xf32> to vector<1x16xf32>
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %first) -> (vector<1x16xf32>) {
    %row = vector.transfer_read %rows[%i, %c0], %pad {in_bounds = [true, true]} : memref<4x16xf32>, vector<1x16xf32>
    %next = arith.addf %acc, %row : vector<1x16xf32>
    scf.yield %next : vector<1x16xf32>
  }
  vector.transfer_write %sum, %out[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, memref<1x16xf32>
  return
}
