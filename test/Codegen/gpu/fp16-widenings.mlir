// Preparing a kernel for its GPU schedule moves fp16 storage's widenings (an arith.extf generic over a
// kernel's f16 argument, made by dnnf-gpu-fp16-storage) into the ops that read them. A
// gather reads its f16 element and widens it, also through a reshape of the table (a
// gather through its 1-d view): the table is not widened whole, which would be a
// dispatch of its own before the gather.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan | FileCheck %s

// CHECK-LABEL: func.func private @kernel_0.compiled(
// CHECK-SAME:    %[[TABLE:[a-z0-9]+]]: memref<500x64xf16>
// CHECK-NOT:     500x64xf32
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[TABLE]] {{\[\[}}0, 1]] : memref<500x64xf16> into memref<32000xf16>
// CHECK:         gpu.launch
// CHECK-NOT:     500x64xf32
// CHECK:           %[[HALF:.*]] = memref.load %[[FLAT]][%{{.*}}] : memref<32000xf16>
// CHECK:           arith.extf %[[HALF]] : f16 to f32
// CHECK:           gpu.terminator
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func private @kernel_0(%table: tensor<500x64xf16>, %ids: tensor<40xi64>) -> tensor<40x64xf32> attributes {dnnf.kernel} {
  %e = tensor.empty() : tensor<500x64xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%table : tensor<500x64xf16>) outs(%e : tensor<500x64xf32>) {
  ^bb0(%h: f16, %o: f32):
    %f = arith.extf %h : f16 to f32
    linalg.yield %f : f32
  } -> tensor<500x64xf32>
  %flat = tensor.collapse_shape %wide [[0, 1]] : tensor<500x64xf32> into tensor<32000xf32>
  %out = tensor.empty() : tensor<40x64xf32>
  %g = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
       ins(%ids : tensor<40xi64>) outs(%out : tensor<40x64xf32>) {
  ^bb0(%id: i64, %o: f32):
    %c64 = arith.constant 64 : index
    %r = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %base = arith.muli %r, %c64 : index
    %k = arith.addi %base, %j : index
    %v = tensor.extract %flat[%k] : tensor<32000xf32>
    linalg.yield %v : f32
  } -> tensor<40x64xf32>
  return %g : tensor<40x64xf32>
}

func.func @main(%table: tensor<500x64xf16>, %ids: tensor<40xi64>) -> tensor<40x64xf32> {
  %r = call @kernel_0(%table, %ids) : (tensor<500x64xf16>, tensor<40xi64>) -> tensor<40x64xf32>
  return %r : tensor<40x64xf32>
}
