// Filter panels streamed by a matmul (codegen/cpu/panel_prefetch.py, after bufferization):
// where B is one [K, NR] panel sliced from panels [P, K, NR] the kernel gets as an
// argument (dnnf-channel-panels' product, its weights), every row of B read in the
// reduction loop is preceded by memref.prefetch of its two cache lines 2048 floats
// further in the whole buffer (the next panel past the end of this one), the index
// clamped to the buffer's last element. Its 9 rows are one register tile
// (tiles.WHOLE_M_REGISTERS: 18 of the 32 vector registers), not 8 and a peeled one. A B
// that is not such a panel gets no prefetch.
// An A of more than 768 KiB in rows of at most 2 KiB (panel_prefetch.prefetches_next_row_tile)
// gets, in the reduction loop of each 8-row tile, a prefetch of the next tile's 8 rows at
// the same step (8 rows = 2048 floats further, rows 256 apart), the first clamped so that
// the last stays in the buffer (262143 - 7 * 256); rows of 4 KiB get none.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 --dnnf-codegen-schedule=cpu=x86-64-v4 \
// RUN:   --dnnf-codegen-bufferize=cpu=x86-64-v4 --dnnf-codegen-map-to-hardware=cpu=x86-64-v4 | FileCheck %s

// CHECK-LABEL: func.func @panel_product(
// CHECK-DAG:     %[[AHEAD:.*]] = arith.constant 2048 : index
// CHECK-DAG:     %[[NEXT_LINE:.*]] = arith.constant 2064 : index
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 102399 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<9x32xf32>) {
// CHECK:           %[[ROW:.*]] = memref.subview %{{.*}}[%{{.*}}, 0] [1, 32] [1, 1]
// CHECK:           %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[ROW]]
// CHECK:           %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [102400], strides: [1]
// CHECK:           %[[A1:.*]] = arith.addi %[[OFFSET]], %[[AHEAD]] : index
// CHECK:           %[[I1:.*]] = arith.minsi %[[A1]], %[[LAST]] : index
// CHECK:           memref.prefetch %[[FLAT]][%[[I1]]], read, locality<3>, data : memref<102400xf32>
// CHECK:           %[[A2:.*]] = arith.addi %[[OFFSET]], %[[NEXT_LINE]] : index
// CHECK:           %[[I2:.*]] = arith.minsi %[[A2]], %[[LAST]] : index
// CHECK:           memref.prefetch %[[FLAT]][%[[I2]]], read, locality<3>, data : memref<102400xf32>
// CHECK:           vector.load %[[ROW]][%{{.*}}, %{{.*}}] : memref<1x32xf32, strided<[32, 1], offset: ?>>, vector<32xf32>
func.func @panel_product(%a: tensor<9x320xf32>, %w: tensor<10x320x32xf32>) -> tensor<10x9x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x9x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x9x32xf32>) -> tensor<10x9x32xf32>
  %r = scf.forall (%j) in (10) shared_outs(%acc = %init) -> (tensor<10x9x32xf32>) {
    %panel = tensor.extract_slice %w[%j, 0, 0] [1, 320, 32] [1, 1, 1] : tensor<10x320x32xf32> to tensor<320x32xf32>
    %tile = tensor.extract_slice %acc[%j, 0, 0] [1, 9, 32] [1, 1, 1] : tensor<10x9x32xf32> to tensor<9x32xf32>
    %p = linalg.matmul ins(%a, %panel : tensor<9x320xf32>, tensor<320x32xf32>) outs(%tile : tensor<9x32xf32>) -> tensor<9x32xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %p into %acc[%j, 0, 0] [1, 9, 32] [1, 1, 1] : tensor<9x32xf32> into tensor<10x9x32xf32>
    }
  }
  return %r : tensor<10x9x32xf32>
}

// -----

// CHECK-LABEL: func.func @whole_b(
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<9x32xf32>) {
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @whole_b(%a: tensor<9x320xf32>, %b: tensor<320x32xf32>) -> tensor<9x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<9x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<9x32xf32>) -> tensor<9x32xf32>
  %p = linalg.matmul ins(%a, %b : tensor<9x320xf32>, tensor<320x32xf32>) outs(%init : tensor<9x32xf32>) -> tensor<9x32xf32>
  return %p : tensor<9x32xf32>
}

// -----

// CHECK-LABEL: func.func @next_row_tile(
// CHECK-DAG:     %[[NEXT:.*]] = arith.constant 2048 : index
// CHECK-DAG:     %[[LAST_FIRST:.*]] = arith.constant 260351 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>) {
// CHECK:           %[[COLUMN:.*]] = memref.subview %{{.*}}[0, %{{.*}}] [8, 1] [1, 1]
// CHECK:           %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[COLUMN]]
// CHECK:           %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [262144], strides: [1]
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[OFFSET]], %[[NEXT]] : index
// CHECK:           %[[FIRST:.*]] = arith.minsi %[[AHEAD]], %[[LAST_FIRST]] : index
// CHECK:           memref.prefetch %[[FLAT]][%[[FIRST]]], read, locality<3>, data : memref<262144xf32>
// CHECK:           %[[SECOND:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
// CHECK:           memref.prefetch %[[FLAT]][%[[SECOND]]], read, locality<3>, data : memref<262144xf32>
// CHECK-COUNT-6:   memref.prefetch %[[FLAT]][%{{.*}}], read, locality<3>, data : memref<262144xf32>
// CHECK-NEXT:      vector.transfer_read %[[COLUMN]]
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @next_row_tile(%a: tensor<1024x256xf32>, %b: tensor<256x64xf32>) -> tensor<1024x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x64xf32>) -> tensor<1024x64xf32>
  %p = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x64xf32>) outs(%init : tensor<1024x64xf32>) -> tensor<1024x64xf32>
  return %p : tensor<1024x64xf32>
}

// -----

// CHECK-LABEL: func.func @long_a_rows(
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @long_a_rows(%a: tensor<256x1024xf32>, %b: tensor<1024x64xf32>) -> tensor<256x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %p = linalg.matmul ins(%a, %b : tensor<256x1024xf32>, tensor<1024x64xf32>) outs(%init : tensor<256x64xf32>) -> tensor<256x64xf32>
  return %p : tensor<256x64xf32>
}
