// The next rows of a row group in chunks prefetched (codegen/cpu/row_prefetch.py, after
// bufferization): a residual add + layer norm over 5 rows of 768 is cut in chunk loops
// (64 floats on AVX-512); in the first, the one that reads the row from memory, each
// chunk read of the two inputs is preceded by prefetches of the same chunk one row
// (768 floats) further in its buffer, a line (16 floats) apiece, the index clamped to
// the buffer's last element (3839): the last row prefetches itself. The later chunk
// loops, which read the row from L1, get none; a layer norm's scale (a buffer of one
// row) none either. Rows kept whole (96) get no prefetch at all, nor AVX2 code (its
// chunks of 32 floats; measured slower with them).
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=lower-vectors | FileCheck %s
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --stop-after=lower-vectors | FileCheck %s --check-prefix=AVX2

// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:    %[[X:[^:]*]]: memref<5x768xf32>, %[[R:[^:]*]]: memref<5x768xf32>
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 3839 : index
// CHECK-DAG:     %[[ROW:.*]] = arith.constant 768 : index
// CHECK-DAG:     %[[ROW1:.*]] = arith.constant 784 : index
// CHECK-DAG:     %[[ROW3:.*]] = arith.constant 816 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[XROW:.*]] = memref.subview %[[X]][%[[I]], 0] [1, 768]
// CHECK:           scf.for %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (vector<64xf32>) {
// CHECK:             %[[XCHUNK:.*]] = memref.subview %[[XROW]]
// CHECK:             %[[BASE:[^,]*]], %[[OFFSET:[^,]*]], %{{.*}} = memref.extract_strided_metadata %[[XCHUNK]]
// CHECK:             %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [3840], strides: [1]
// CHECK:             %[[AHEAD:.*]] = arith.addi %[[OFFSET]], %[[ROW]] : index
// CHECK:             %[[CLAMPED:.*]] = arith.minsi %[[AHEAD]], %[[LAST]] : index
// CHECK:             memref.prefetch %[[FLAT]][%[[CLAMPED]]], read, locality<3>, data
// CHECK:             arith.addi %[[OFFSET]], %[[ROW1]] : index
// CHECK:             memref.prefetch %[[FLAT]]
// CHECK:             memref.prefetch %[[FLAT]]
// CHECK:             arith.addi %[[OFFSET]], %[[ROW3]] : index
// CHECK:             memref.prefetch %[[FLAT]]
// CHECK-NEXT:        vector.load %[[XCHUNK]]
// CHECK-COUNT-4:     memref.prefetch
// CHECK-NOT:         memref.prefetch
// CHECK:             scf.yield
// CHECK-NOT:       memref.prefetch
// CHECK:         return

// AVX2-LABEL: func.func @layer_norm(
// AVX2:         scf.for %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (vector<32xf32>) {
// AVX2-NOT:     memref.prefetch
// AVX2:         return
func.func @layer_norm(%x: tensor<5x768xf32>, %r: tensor<5x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<5x768xf32> {
  %0 = "ecg.add"(%x, %r) : (tensor<5x768xf32>, tensor<5x768xf32>) -> tensor<5x768xf32>
  %1 = "ecg.layer_normalization"(%0, %g, %b) {axis = -1 : i64, epsilon = 1.0E-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64} : (tensor<5x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<5x768xf32>
  return %1 : tensor<5x768xf32>
}

// CHECK-LABEL: func.func @whole_rows(
// CHECK-NOT:     memref.prefetch
// CHECK:         return
// AVX2-LABEL:  func.func @whole_rows(
// AVX2-NOT:      memref.prefetch
// AVX2:          return
func.func @whole_rows(%x: tensor<5x96xf32>, %r: tensor<5x96xf32>, %g: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<5x96xf32> {
  %0 = "ecg.add"(%x, %r) : (tensor<5x96xf32>, tensor<5x96xf32>) -> tensor<5x96xf32>
  %1 = "ecg.layer_normalization"(%0, %g, %b) {axis = -1 : i64, epsilon = 1.0E-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64} : (tensor<5x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<5x96xf32>
  return %1 : tensor<5x96xf32>
}
