// A padding read at offsets (codegen/gpu/offset_reads.py): rows 3 * i + 1 and 3 * i + 2
// of a padded input (a 3-d convolution's depth stride 3, two of its kernel depths: each
// strided slice composed into its reader's map, as concats_to_pieces leaves them). The
// padding is a gather over its own loops (`linalg.index`), read twice, so that MLIR's
// element-wise fusion leaves it. Computed in each reader's body, its indices are the
// reader's map of them (row 3 * i + 1), not the reader's own loop indices (rows i:
// every kernel depth but the first read the wrong rows).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan | FileCheck %s

// Row 3 * i + 1 of the padding is row 3 * i of %x, row 3 * i + 2 is row 3 * i + 1.
// CHECK: #[[ROWS:.+]] = affine_map<()[s0] -> (s0 floordiv 5)>
// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch
// CHECK: %[[I:.+]] = affine.apply #[[ROWS]]()[%thread_id_x]
// CHECK: ^bb0(%out: f32):
// CHECK-NEXT: %[[ROW1:.+]] = arith.muli %[[I]], %c3 : index
// CHECK-NEXT: arith.cmpi sge, %[[ROW1]], %c0 : index
// CHECK: ^bb0(%out: f32):
// CHECK-NEXT: %[[TIMES3:.+]] = arith.muli %{{.+}}, %c3 : index
// CHECK-NEXT: %[[ROW2:.+]] = arith.addi %[[TIMES3]], %c1 : index
// CHECK-NEXT: arith.cmpi sge, %[[ROW2]], %c0 : index
#row1 = affine_map<(i, j) -> (i * 3 + 1, j)>
#row2 = affine_map<(i, j) -> (i * 3 + 2, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func private @kernel_0(%x: tensor<8x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x5xf32> to tensor<10x5xf32>
  %e = tensor.empty() : tensor<2x5xf32>
  %r1 = linalg.generic {indexing_maps = [#row1, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p : tensor<10x5xf32>) outs(%e : tensor<2x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x5xf32>
  %r2 = linalg.generic {indexing_maps = [#row2, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p : tensor<10x5xf32>) outs(%e : tensor<2x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x5xf32>
  return %r1, %r2 : tensor<2x5xf32>, tensor<2x5xf32>
}

func.func @main(%x: tensor<8x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %y:2 = call @kernel_0(%x) : (tensor<8x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>)
  return %y#0, %y#1 : tensor<2x5xf32>, tensor<2x5xf32>
}
