// The math functions as arithmetic (codegen/approximations.py, in the CPU prepare
// step): their products feeding sums carry `contract`, so that LLVM fuses them into
// FMAs where the CPU has them (Cephes' exp polynomial: one FMA per degree).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// CHECK-LABEL: func.func @exp(
// CHECK-NOT:     math.exp
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:    arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:    math.floor
// CHECK:         arith.shli
// CHECK:         linalg.yield
#id = affine_map<(i) -> (i)>
func.func @exp(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @erf(
// CHECK-NOT:     math.erf
// CHECK:         %[[SQUARE:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:    arith.mulf %[[SQUARE]], %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:    arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} fastmath<ninf,arcp,contract> : f32
// CHECK:         linalg.yield
#id = affine_map<(i) -> (i)>
func.func @erf(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.erf %in : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %y : tensor<64xf32>
}
