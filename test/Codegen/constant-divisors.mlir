// Divisions by a constant as products by its reciprocal (codegen/constant_divisors.py,
// in the CPU prepare step): BERT's GELU divides by sqrt(2) before erf. Divisors whose
// reciprocal is not a finite normal number, and divisions by a variable, stay.
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 | FileCheck %s

// A 0-d constant input, broadcast by the generic (the lowering of ecg.div).
// CHECK-LABEL: func.func @splat_input(
// CHECK:         %[[R:.*]] = arith.constant 0.707106769 : f32
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[IN]], %[[R]] : f32
// CHECK-NEXT:      linalg.yield %[[P]] : f32
#id = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
func.func @splat_input(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c = arith.constant dense<1.41421354> : tensor<f32>
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]}
      ins(%x, %c : tensor<64xf32>, tensor<f32>) outs(%e : tensor<64xf32>) {
  ^bb0(%in: f32, %d: f32, %out: f32):
    %r = arith.divf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// A scalar constant in the body, f64 too.
// CHECK-LABEL: func.func @scalar_constant(
// CHECK-NOT:     arith.divf
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK-NOT:     arith.divf
#id = affine_map<(i) -> (i)>
func.func @scalar_constant(%x: tensor<64xf64>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%in: f64, %out: f64):
    %c = arith.constant 3.0 : f64
    %r = arith.divf %in, %c : f64
    linalg.yield %r : f64
  } -> tensor<64xf64>
  return %y : tensor<64xf64>
}

// -----

// Zero, a divisor whose reciprocal is subnormal, a per-element constant input and a
// variable divisor keep their divisions.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-4: arith.divf
// CHECK-NOT:     arith.mulf
#id = affine_map<(i) -> (i)>
func.func @kept(%x: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  %per_element = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %per_element, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %k: f32, %w: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %huge = arith.constant 3.0e38 : f32
    %a = arith.divf %in, %zero : f32
    %b = arith.divf %a, %huge : f32
    %c = arith.divf %b, %k : f32
    %d = arith.divf %c, %w : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
