// A register tile's epilogue rows prefetched (codegen/cpu/epilogue_prefetch.py, after
// bufferization): the 1x1 convolution is a matmul of 8 x 32 register tiles whose
// epilogue adds the bias and the residual and applies ReLU; before the reduction loop
// of each tile, the residual's 8 rows of 32 floats (two cache lines each) are
// prefetched for reading and the output's for writing, through the tile's own views,
// moved above the loop, and so are the next row tile's (8 rows further, clamped to the
// last tile's rows: 56 of 64). Two row tiles of one column tile in the same loop body (29
// channels: 16 and 13 rows, the partial one peeled) each prefetch their own rows before
// their own loop, at static rows: no next tile's view. A matmul without an epilogue gets no prefetch.
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=lower-vectors | FileCheck %s

// CHECK-LABEL: func.func @conv1x1_bias_add_relu(
// CHECK-SAME:    %{{.*}}: memref<1x32x8x8xf32>, %{{.*}}: memref<64x32x1x1xf32>, %{{.*}}: memref<64xf32>, %[[R:.*]]: memref<1x64x8x8xf32>, %[[OUT:.*]]: memref<1x64x8x8xf32>)
// CHECK-DAG:     %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C56:.*]] = arith.constant 56 : index
// CHECK-DAG:     %[[OUT2:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2, 3]] : memref<1x64x8x8xf32> into memref<64x64xf32>
// CHECK-DAG:     %[[R2:.*]] = memref.collapse_shape %[[R]] {{\[}}[0, 1], [2, 3]] : memref<1x64x8x8xf32> into memref<64x64xf32>
// CHECK:         scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[RV:.*]] = memref.subview %[[R2]][%[[M]], %[[N]]] [8, 32] [1, 1]
// CHECK-NEXT:        memref.prefetch %[[RV]][%[[C0]], %[[C0]]], read, locality<3>, data
// CHECK-NEXT:        memref.prefetch %[[RV]][%[[C0]], %[[C16]]], read, locality<3>, data
// CHECK-COUNT-13:    memref.prefetch %[[RV]][%{{.*}}, %{{.*}}], read, locality<3>, data
// CHECK-NEXT:        memref.prefetch %[[RV]][%[[C7]], %[[C16]]], read, locality<3>, data
// CHECK-NEXT:        %[[AHEAD:.*]] = arith.addi %[[M]], %[[C8]] : index
// CHECK-NEXT:        %[[NEXT:.*]] = arith.minsi %[[AHEAD]], %[[C56]] : index
// CHECK-NEXT:        %[[RN:.*]] = memref.subview %[[R2]][%[[NEXT]], %[[N]]] [8, 32] [1, 1]
// CHECK-NEXT:        memref.prefetch %[[RN]][%[[C0]], %[[C0]]], read, locality<3>, data
// CHECK-COUNT-14:    memref.prefetch %[[RN]][%{{.*}}, %{{.*}}], read, locality<3>, data
// CHECK-NEXT:        memref.prefetch %[[RN]][%[[C7]], %[[C16]]], read, locality<3>, data
// CHECK-NEXT:        %[[OV:.*]] = memref.subview %[[OUT2]][%[[M]], %[[N]]] [8, 32] [1, 1]
// CHECK-NEXT:        memref.prefetch %[[OV]][%[[C0]], %[[C0]]], write, locality<3>, data
// CHECK-COUNT-14:    memref.prefetch %[[OV]][%{{.*}}, %{{.*}}], write, locality<3>, data
// CHECK-NEXT:        memref.prefetch %[[OV]][%[[C7]], %[[C16]]], write, locality<3>, data
// CHECK-NEXT:        %[[ON:.*]] = memref.subview %[[OUT2]][%[[NEXT]], %[[N]]] [8, 32] [1, 1]
// CHECK-NEXT:        memref.prefetch %[[ON]][%[[C0]], %[[C0]]], write, locality<3>, data
// CHECK-COUNT-14:    memref.prefetch %[[ON]][%{{.*}}, %{{.*}}], write, locality<3>, data
// CHECK-NEXT:        memref.prefetch %[[ON]][%[[C7]], %[[C16]]], write, locality<3>, data
// CHECK-NEXT:        scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>) {
// CHECK-NOT:           memref.prefetch
// CHECK:               scf.yield
// CHECK-NEXT:        }
// CHECK-NOT:         memref.prefetch
// CHECK:             vector.transfer_write %{{.*}}, %[[OV]][%[[C0]], %[[C0]]]
// CHECK:         return
func.func @conv1x1_bias_add_relu(%x: tensor<1x32x8x8xf32>, %w: tensor<64x32x1x1xf32>, %b: tensor<64xf32>, %r: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x8x8xf32>, tensor<64x32x1x1xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  %a = "ecg.add"(%y, %r) : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %z = "ecg.relu"(%a) : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %z : tensor<1x64x8x8xf32>
}

// CHECK-LABEL: func.func @two_row_tiles(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG:     %[[C15:.*]] = arith.constant 15 : index
// CHECK:         scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[V1:.*]] = memref.subview %{{.*}}[0, %[[N]]] [16, 16] [1, 1]
// CHECK-NEXT:      memref.prefetch %[[V1]][%[[C0]], %[[C0]]], write
// CHECK-COUNT-14:  memref.prefetch %[[V1]][%{{.*}}, %[[C0]]], write
// CHECK-NEXT:      memref.prefetch %[[V1]][%[[C15]], %[[C0]]], write
// CHECK-NEXT:      scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<16x16xf32>) {
// CHECK:           vector.transfer_write %{{.*}}, %[[V1]][%[[C0]], %[[C0]]]
// CHECK-NEXT:      %[[V2:.*]] = memref.subview %{{.*}}[16, %[[N]]] [13, 16] [1, 1]
// CHECK-NEXT:      memref.prefetch %[[V2]][%[[C0]], %[[C0]]], write
// CHECK-COUNT-11:  memref.prefetch %[[V2]][%{{.*}}, %[[C0]]], write
// CHECK-NEXT:      memref.prefetch %[[V2]][%[[C12]], %[[C0]]], write
// CHECK-NEXT:      scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<13x16xf32>) {
// CHECK:           vector.transfer_write %{{.*}}, %[[V2]][%[[C0]], %[[C0]]]
func.func @two_row_tiles(%x: tensor<1x64x12x12xf32>, %w: tensor<29x64x1x1xf32>, %b: tensor<29xf32>) -> tensor<1x29x12x12xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x64x12x12xf32>, tensor<29x64x1x1xf32>, tensor<29xf32>) -> tensor<1x29x12x12xf32>
  %z = "ecg.relu"(%y) : (tensor<1x29x12x12xf32>) -> tensor<1x29x12x12xf32>
  return %z : tensor<1x29x12x12xf32>
}

// CHECK-LABEL: func.func @conv1x1_alone(
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>) {
// CHECK-NOT:     memref.prefetch
// CHECK:         return
func.func @conv1x1_alone(%x: tensor<1x32x8x8xf32>, %w: tensor<64x32x1x1xf32>) -> tensor<1x64x8x8xf32> {
  %y = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x8x8xf32>, tensor<64x32x1x1xf32>) -> tensor<1x64x8x8xf32>
  return %y : tensor<1x64x8x8xf32>
}

// Output rows of 196 floats (14x14) do not start on a cache line: a tile's row of 32
// columns touches three lines, so its last element's line is prefetched too.
// CHECK-LABEL: func.func @misaligned_rows(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C31:.*]] = arith.constant 31 : index
// CHECK:         %[[RV:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [8, 32] [1, 1] : memref<64x196xf32> to memref<8x32xf32, strided<[196, 1], offset: ?>>
// CHECK-NEXT:    memref.prefetch %[[RV]][%[[C0]], %[[C0]]], read
// CHECK-NEXT:    memref.prefetch %[[RV]][%[[C0]], %[[C16]]], read
// CHECK-NEXT:    memref.prefetch %[[RV]][%[[C0]], %[[C31]]], read
func.func @misaligned_rows(%x: tensor<1x32x14x14xf32>, %w: tensor<64x32x1x1xf32>, %b: tensor<64xf32>, %r: tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x32x14x14xf32>, tensor<64x32x1x1xf32>, tensor<64xf32>) -> tensor<1x64x14x14xf32>
  %a = "ecg.add"(%y, %r) : (tensor<1x64x14x14xf32>, tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %z = "ecg.relu"(%a) : (tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  return %z : tensor<1x64x14x14xf32>
}

// ResNet-50's 1x1 256 -> 1024 + residual + ReLU at 14x14: A (the 1 MiB weights) leaves
// L2 and a packed 256 x 32 panel with 8 rows of A overflows L1, so the tiles go along
// the columns inside the loop over row tiles, B read in place (matmul.tiles_rows_outer):
// the next tile is the next column tile, 32 columns on, clamped to the last whole one's
// (164 of 196: the partial 4 columns are peeled).
// CHECK-LABEL: func.func @rows_outer(
// CHECK-SAME:    %{{.*}}: memref<1x256x14x14xf32>, %{{.*}}: memref<1024x256x1x1xf32>, %{{.*}}: memref<1024xf32>, %[[R:.*]]: memref<1x1024x14x14xf32>, %[[OUT:.*]]: memref<1x1024x14x14xf32>)
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C164:.*]] = arith.constant 164 : index
// CHECK-DAG:     %[[R2:.*]] = memref.collapse_shape %[[R]] {{\[}}[0, 1], [2, 3]] : memref<1x1024x14x14xf32> into memref<1024x196xf32>
// CHECK-DAG:     %[[OUT2:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2, 3]] : memref<1x1024x14x14xf32> into memref<1024x196xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %[[M:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[RV:.*]] = memref.subview %[[R2]][%[[M]], %[[N]]] [8, 32] [1, 1]
// CHECK:             %[[AHEAD:.*]] = arith.addi %[[N]], %[[C32]] : index
// CHECK-NEXT:        %[[NEXT:.*]] = arith.minsi %[[AHEAD]], %[[C164]] : index
// CHECK-NEXT:        %[[RN:.*]] = memref.subview %[[R2]][%[[M]], %[[NEXT]]] [8, 32] [1, 1]
// CHECK:             %[[OV:.*]] = memref.subview %[[OUT2]][%[[M]], %[[N]]] [8, 32] [1, 1]
// CHECK:             scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>) {
// CHECK:             vector.transfer_write %{{.*}}, %[[OV]][%{{.*}}, %{{.*}}] {{.*}} : vector<8x32xf32>
// CHECK:         return
func.func @rows_outer(%x: tensor<1x256x14x14xf32>, %w: tensor<1024x256x1x1xf32>, %b: tensor<1024xf32>, %r: tensor<1x1024x14x14xf32>) -> tensor<1x1024x14x14xf32> {
  %y = "ecg.conv"(%x, %w, %b) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x256x14x14xf32>, tensor<1024x256x1x1xf32>, tensor<1024xf32>) -> tensor<1x1024x14x14xf32>
  %a = "ecg.add"(%y, %r) : (tensor<1x1024x14x14xf32>, tensor<1x1024x14x14xf32>) -> tensor<1x1024x14x14xf32>
  %z = "ecg.relu"(%a) : (tensor<1x1024x14x14xf32>) -> tensor<1x1024x14x14xf32>
  return %z : tensor<1x1024x14x14xf32>
}
