// Reductions with their neighbours, one row at a time (codegen/cpu/row_fusion.py): a
// masked softmax and a residual add + layer normalization each become one loop nest
// over the rows, every linalg op of the function fused into it and vectorized a row at
// a time; the row's intermediates are vector values (no linalg op, no tensor.empty is
// left in the loop), the reductions horizontal vector.reduction ops that LLVM
// reassociates into a tree. Two threads: a chunk of rows per thread first.
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=schedule | FileCheck %s
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --threads=2 --stop-after=schedule | FileCheck %s --check-prefix=THREADS
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 | FileCheck %s --check-prefix=LLVM
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=bufferize | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @softmax
// CHECK:         %[[OUT:.*]] = tensor.empty() : tensor<12x128x128xf32>
// CHECK-NEXT:    scf.for %[[I:.*]] = %c0 to %c12
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c128 step %c2
// CHECK-NOT:         linalg.
// CHECK-NOT:         tensor.empty
// CHECK:             vector.transfer_read {{.*}} : tensor<1x2x128xf32>, vector<1x2x128xf32>
// CHECK:             vector.extract %{{.*}}[0, 0] : vector<128xf32> from vector<1x2x128xf32>
// CHECK-NEXT:        vector.reduction <maxnumf>, %{{.*}} : vector<128xf32> into f32
// CHECK-NEXT:        vector.extract %{{.*}}[0, 1] : vector<128xf32> from vector<1x2x128xf32>
// CHECK-NEXT:        vector.reduction <maxnumf>, %{{.*}} : vector<128xf32> into f32
// CHECK-NOT:         linalg.
// CHECK:             vector.reduction <add>, %{{.*}} : vector<128xf32> into f32
// CHECK-NEXT:        vector.extract %{{.*}}[0, 1] : vector<128xf32> from vector<1x2x128xf32>
// CHECK-NEXT:        vector.reduction <add>, %{{.*}} : vector<128xf32> into f32
// CHECK-NOT:         linalg.
// CHECK:             arith.divf %{{.*}} fastmath<arcp> : vector<1x2x128xf32>
// CHECK-NEXT:        vector.transfer_write
// CHECK-NEXT:        tensor.insert_slice
// CHECK-NEXT:        scf.yield
func.func @softmax(%x: tensor<12x128x128xf32>, %mask: tensor<128xf32>) -> tensor<12x128x128xf32> {
  %0 = "ecg.add"(%x, %mask) : (tensor<12x128x128xf32>, tensor<128xf32>) -> tensor<12x128x128xf32>
  %1 = "ecg.softmax"(%0) {axis = -1 : i64} : (tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  return %1 : tensor<12x128x128xf32>
}

// A row of 768 is 48 AVX-512 vectors, more than MIN_CHUNKED_VECTORS (row_chunks.py):
// each reduction is a loop over chunks of 64 accumulating into a vector carried in
// registers, reduced horizontally once, and the root a loop over chunks writing the
// row; the residual add is recomputed in each loop, from inputs the first left in L1.
// CHECK-LABEL: func.func @layer_norm
// CHECK:         scf.for %{{.*}} = %c0 to %c128
// CHECK-NOT:       linalg.
// CHECK-NOT:       tensor.empty
// CHECK:           scf.for %{{.*}} = %c0 to %c768 step %c64 iter_args(%{{.*}}) -> (vector<1x1x64xf32>)
// CHECK-COUNT-2:     vector.transfer_read {{.*}} : tensor<1x1x64xf32>, vector<1x1x64xf32>
// CHECK:             arith.addf
// CHECK:             scf.yield %{{.*}} : vector<1x1x64xf32>
// CHECK:           vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK-NOT:       linalg.
// CHECK:           scf.for %{{.*}} = %c0 to %c768 step %c64 iter_args(%{{.*}}) -> (vector<1x1x64xf32>)
// CHECK:           vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// CHECK-NOT:       linalg.
// CHECK:           scf.for %{{.*}} = %c0 to %c768 step %c64 iter_args(%{{.*}}) -> (tensor<1x1x768xf32>)
// CHECK:             vector.transfer_write {{.*}} : vector<1x1x64xf32>, tensor<1x1x64xf32>
// CHECK-NEXT:        tensor.insert_slice
// CHECK-NEXT:        scf.yield
// CHECK:           tensor.insert_slice
// CHECK-NEXT:      scf.yield

// THREADS-LABEL: func.func @softmax
// THREADS:         scf.forall (%{{.*}}) in (2)
// THREADS:           scf.for %{{.*}} = %c0 to %c6
// THREADS-NEXT:        scf.for %{{.*}} = %c0 to %c128 step %c2
// THREADS:               vector.reduction <maxnumf>
// THREADS-LABEL: func.func @layer_norm
// THREADS:         scf.forall (%{{.*}}) in (2)
// THREADS:           scf.for %{{.*}} = %c0 to %c64
// THREADS:             vector.reduction <add>

// PLAN: [[ROOT:k[0-9]+]] linalg.generic [12, 128, 128] row-fused {'row': [128], 'fused': 6, 'rows_per_step': 2} @softmax
// PLAN-NEXT: linalg.generic [12, 128, 128] in [[ROOT]] {} @softmax
// PLAN-NEXT: linalg.fill [12, 128] in [[ROOT]] {} @softmax
// PLAN-NEXT: linalg.reduce [12, 128, 128] in [[ROOT]] {} @softmax
// PLAN: linalg.generic [1, 128, 768] row-fused {'row': [768], 'fused': 6, 'rows_per_step': 1, 'chunk': 64} @layer_norm

// LLVM-LABEL: llvm.func @softmax
// LLVM:         llvm.intr.vector.reduce.fmax(
// LLVM:         llvm.intr.vector.reduce.fadd{{.*}}#llvm.fastmath<reassoc>
func.func @layer_norm(%x: tensor<1x128x768xf32>, %r: tensor<1x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<1x128x768xf32> {
  %0 = "ecg.add"(%x, %r) : (tensor<1x128x768xf32>, tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  %1 = "ecg.layer_normalization"(%0, %g, %b) {axis = -1 : i64, epsilon = 1.0E-5 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  return %1 : tensor<1x128x768xf32>
}

// A 512-long softmax row (32 AVX-512 vectors) in chunks too: the max, then the exps
// stored once in a row buffer of their own (the exp is costly to recompute) and summed,
// then the scaling of the stored row into the output's: no copy of the output's row.
// PLAN: linalg.generic [24, 512] row-fused {'row': [512], 'fused': 5, 'rows_per_step': 1, 'chunk': 64} @softmax_long_rows
// BUFFERS-LABEL: func.func @softmax_long_rows
// BUFFERS:         scf.for %{{.*}} = %c0 to %c24 step %c1
// BUFFERS:           scf.for %{{.*}} = %c0 to %c512 step %c64 iter_args(%{{.*}}) -> (vector<1x64xf32>)
// BUFFERS:           vector.reduction <maxnumf>, %{{.*}} : vector<64xf32> into f32
// BUFFERS:           %[[EXPS:.*]] = memref.alloc() {{.*}} : memref<1x512xf32>
// BUFFERS-NOT:       linalg.copy
// BUFFERS:           scf.for %{{.*}} = %c0 to %c512 step %c64 {
// BUFFERS:             math.floor
// BUFFERS:             vector.transfer_write %{{.*}}, %{{.*}} : vector<1x64xf32>, memref<1x64xf32, {{.*}}>
// BUFFERS:           scf.for %{{.*}} = %c0 to %c512 step %c64 iter_args(%{{.*}}) -> (vector<1x64xf32>)
// BUFFERS:             memref.subview %[[EXPS]]
// BUFFERS:           vector.reduction <add>, %{{.*}} : vector<64xf32> into f32
// BUFFERS:           scf.for %{{.*}} = %c0 to %c512 step %c64 {
// BUFFERS:             memref.subview %[[EXPS]]
// BUFFERS-NOT:         math.floor
// BUFFERS:             arith.divf %{{.*}} fastmath<arcp> : vector<1x64xf32>
// BUFFERS-NEXT:        vector.transfer_write
func.func @softmax_long_rows(%x: tensor<24x512xf32>) -> tensor<24x512xf32> {
  %0 = "ecg.softmax"(%x) {axis = -1 : i64} : (tensor<24x512xf32>) -> tensor<24x512xf32>
  return %0 : tensor<24x512xf32>
}

// Short rows (128 here: 8 AVX-512 vectors, at most PAIRED_ROW_VECTORS) go two per step
// (above) when they pair up evenly; 7 rows do not: one per step.
// PLAN: linalg.generic [3, 7, 64] row-fused {'row': [64], 'fused': 5, 'rows_per_step': 1} @softmax_odd_rows
// CHECK-LABEL: func.func @softmax_odd_rows
// CHECK:         scf.for %{{.*}} = %c0 to %c7 step %c1
// CHECK:           vector.transfer_read {{.*}} : tensor<1x1x64xf32>, vector<1x1x64xf32>
func.func @softmax_odd_rows(%x: tensor<3x7x64xf32>) -> tensor<3x7x64xf32> {
  %0 = "ecg.softmax"(%x) {axis = -1 : i64} : (tensor<3x7x64xf32>) -> tensor<3x7x64xf32>
  return %0 : tensor<3x7x64xf32>
}

// A trailing dim of 1 is folded away before scheduling (codegen/cpu/unit_dims.py): the
// rows are [64, 64], 64 vectors of 64, and the layer normalization is one row group.
// PLAN: linalg.generic [7, 64, 64] row-fused {'row': [64, 64], 'fused': 5, 'rows_per_step': 1} @layer_norm_unit_last_dim
// PLAN: linalg.reduce [7, 64, 64] in {{k[0-9]+}} {} @layer_norm_unit_last_dim
func.func @layer_norm_unit_last_dim(%x: tensor<7x64x64x1xf32>, %g: tensor<64x64x1xf32>, %b: tensor<64x64x1xf32>) -> tensor<7x64x64x1xf32> {
  %0 = "ecg.layer_normalization"(%x, %g, %b) {axis = 1 : i64, epsilon = 1.0E-2 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64} : (tensor<7x64x64x1xf32>, tensor<64x64x1xf32>, tensor<64x64x1xf32>) -> tensor<7x64x64x1xf32>
  return %0 : tensor<7x64x64x1xf32>
}

// A row of [64, 32, 2] would be 2,048 two-element vectors per op once unrolled (a
// [64, 64, 1] row, before unit dims were folded, took LLVM over 15 minutes): no row
// group, its ops scheduled alone.
// PLAN-NOT: row-fused {{.*}} @layer_norm_short_last_dim
// PLAN: linalg.reduce [7, 64, 32, 2] loops {} @layer_norm_short_last_dim
func.func @layer_norm_short_last_dim(%x: tensor<7x64x32x2xf32>, %g: tensor<64x32x2xf32>, %b: tensor<64x32x2xf32>) -> tensor<7x64x32x2xf32> {
  %0 = "ecg.layer_normalization"(%x, %g, %b) {axis = 1 : i64, epsilon = 1.0E-2 : f64, operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64} : (tensor<7x64x32x2xf32>, tensor<64x32x2xf32>, tensor<64x32x2xf32>) -> tensor<7x64x32x2xf32>
  return %0 : tensor<7x64x32x2xf32>
}
