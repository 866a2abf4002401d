// Results written in place into the caller's out-parameters (bufferization.py,
// results_in_place): a returned buffer allocated by the function becomes the
// out-parameter, and so does one that the function returns reshaped (the expand of
// a matmul's rows, the heads merged back after a transpose): the allocation is then
// the inverse reshape of the out-parameter. No result is copied.
// RUN: %PYTHON -m dnnf_mlir.codegen %s --target=host --cpu=x86-64-v4 --emit=mlir --stop-after=bufferize | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<64x96xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<64x96xf32>
// CHECK-NOT: linalg.copy {{.*}} outs(%[[OUT]]
// CHECK: return
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x96xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x96xf32>) outs(%init : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// CHECK-LABEL: func.func @matmul_expanded
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<1x64x96xf32>
// CHECK: memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<1x64x96xf32> into memref<64x96xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<64x96xf32>
// CHECK-NOT: linalg.copy {{.*}} outs(%[[OUT]]
// CHECK: return
func.func @matmul_expanded(%a: tensor<64x32xf32>, %b: tensor<32x96xf32>) -> tensor<1x64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x96xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x96xf32>) outs(%init : tensor<64x96xf32>) -> tensor<64x96xf32>
  %e = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, 64, 96] : tensor<64x96xf32> into tensor<1x64x96xf32>
  return %e : tensor<1x64x96xf32>
}

// CHECK-LABEL: func.func @heads_merged
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<32x64xf32>
// CHECK: memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2]] output_shape [32, 4, 16] : memref<32x64xf32> into memref<32x4x16xf32>
// CHECK-NOT: memref.alloc()
// CHECK-NOT: linalg.copy {{.*}} outs(%[[OUT]]
// CHECK: return
func.func @heads_merged(%x: tensor<4x32x16xf32>) -> tensor<32x64xf32> {
  %empty = tensor.empty() : tensor<32x4x16xf32>
  %t = linalg.transpose ins(%x : tensor<4x32x16xf32>) outs(%empty : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<32x4x16xf32> into tensor<32x64xf32>
  return %c : tensor<32x64xf32>
}

// A buffer returned both whole and reshaped is one out-parameter; the other gets a copy.
// CHECK-LABEL: func.func @returned_twice
// CHECK-SAME: %[[WHOLE:[a-z0-9]+]]: memref<32x4x16xf32>, %[[MERGED:[a-z0-9]+]]: memref<32x64xf32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[WHOLE]]
// CHECK: linalg.copy {{.*}} ins(%[[VIEW]] : memref<32x64xf32>) outs(%[[MERGED]] : memref<32x64xf32>)
func.func @returned_twice(%x: tensor<4x32x16xf32>) -> (tensor<32x4x16xf32>, tensor<32x64xf32>) {
  %empty = tensor.empty() : tensor<32x4x16xf32>
  %t = linalg.transpose ins(%x : tensor<4x32x16xf32>) outs(%empty : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<32x4x16xf32> into tensor<32x64xf32>
  return %t, %c : tensor<32x4x16xf32>, tensor<32x64xf32>
}

// A buffer returned reshaped that something else reads through the same reshape (a GPU
// kernel's result that its caller reshapes, returns and passes on to another kernel):
// the allocation is the inverse reshape of the out-parameter, the reshape stays for
// its other reader (which canonicalization then folds into a read of the
// out-parameter), and nothing is copied.
// CHECK-LABEL: func.func @returned_reshaped_and_read
// CHECK-SAME: %[[MERGED:[a-z0-9]+]]: memref<32x64xf32>, %[[NEGATED:[a-z0-9]+]]: memref<32x64xf32>
// CHECK: %[[HEADS:.*]] = memref.expand_shape %[[MERGED]] {{\[}}[0], [1, 2]] output_shape [32, 4, 16] : memref<32x64xf32> into memref<32x4x16xf32>
// CHECK-NOT: memref.alloc()
// CHECK-NOT: linalg.copy
// CHECK: memref.subview %[[HEADS]]
// CHECK-NOT: linalg.copy
// CHECK: memref.subview %[[MERGED]]
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @returned_reshaped_and_read(%x: tensor<4x32x16xf32>) -> (tensor<32x64xf32>, tensor<32x64xf32>) {
  %empty = tensor.empty() : tensor<32x4x16xf32>
  %t = linalg.transpose ins(%x : tensor<4x32x16xf32>) outs(%empty : tensor<32x4x16xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<32x4x16xf32> into tensor<32x64xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
       ins(%c : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  return %c, %n : tensor<32x64xf32>, tensor<32x64xf32>
}
