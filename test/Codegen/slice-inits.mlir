// dnnf-codegen-bufferize: tiles written into a slice of one tensor.empty that CSE made
// several results share, each inserted back at the same place (what a peeled tile loop
// of one whole tile folds into: codegen/cpu/matmul.py), get an empty tensor each
// (codegen/cpu/loop_inits.py), so each result is written straight into its own
// out-parameter instead of into one shared buffer copied out.
// RUN: dnnf-opt %s --dnnf-codegen-bufferize=cpu=x86-64-v4 | FileCheck %s

// CHECK-LABEL: func.func @two_tiles_one_empty(
// CHECK-SAME:    %[[A:[^:]*]]: memref<16x16xf32>, %[[B:[^:]*]]: memref<16x16xf32>, %[[R1:[^:]*]]: memref<16x25xf32>, %[[R2:[^:]*]]: memref<16x25xf32>)
// CHECK-NOT:     copy
// CHECK:         %[[S1:.*]] = memref.subview %[[R1]][0, 0] [16, 16] [1, 1]
// CHECK-NOT:     copy
// CHECK:         %[[S2:.*]] = memref.subview %[[R2]][0, 0] [16, 16] [1, 1]
// CHECK-NOT:     copy
// CHECK:         linalg.add ins(%[[A]], %[[B]] : {{.*}}) outs(%[[S1]] :
// CHECK-NOT:     copy
// CHECK:         linalg.sub ins(%[[A]], %[[B]] : {{.*}}) outs(%[[S2]] :
// CHECK-NOT:     copy
// CHECK:         return
func.func @two_tiles_one_empty(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> (tensor<16x25xf32>, tensor<16x25xf32>) {
  %e = tensor.empty() : tensor<16x25xf32>
  %s = tensor.extract_slice %e[0, 0] [16, 16] [1, 1] : tensor<16x25xf32> to tensor<16x16xf32>
  %x = linalg.add ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%s : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.sub ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%s : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r1 = tensor.insert_slice %x into %e[0, 0] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<16x25xf32>
  %r2 = tensor.insert_slice %y into %e[0, 0] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<16x25xf32>
  return %r1, %r2 : tensor<16x25xf32>, tensor<16x25xf32>
}
