// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// The lowered IR survives canonicalization and bufferization.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(convert-ecg-to-linalg,canonicalize,one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

// Nearest: one generic over the output reading one element of the flattened input
// at the offsets of the two axes' tables (i32: the reads along the innermost axis
// are gathers).
// CHECK-LABEL: func.func @nearest_2x
// CHECK-DAG: %[[ROWS:.*]] = arith.constant dense<[0, 0, 4, 4, 8, 8]> : tensor<6xi32>
// CHECK-DAG: %[[COLUMNS:.*]] = arith.constant dense<[0, 0, 1, 1, 2, 2, 3, 3]> : tensor<8xi32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2, 3]] : tensor<1x2x3x4xf32> into tensor<24xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x6x8xf32>)
// CHECK: tensor.extract %[[ROWS]]
// CHECK: tensor.extract %[[COLUMNS]]
// CHECK: %[[AT:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: tensor.extract %[[FLAT]][%[[AT]]] : tensor<24xf32>
// CHECK-NOT: linalg.generic
func.func @nearest_2x(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %0 = "ecg.resize"(%x) {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f64, mode = "nearest", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>, sizes = array<i64: 1, 2, 6, 8>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Bilinear up-sampling: the innermost axis first, alone (two gathers per element at
// the input's height), then the rows (two contiguous reads per element), each tap's
// weight read from a table.
// CHECK-LABEL: func.func @bilinear_2x
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x3x8xf32>)
// CHECK-COUNT-2: tensor.extract %{{.*}}[%{{.*}}] : tensor<24xf32>
// CHECK: tensor.collapse_shape %[[WIDE]] {{\[\[}}0, 1, 2, 3]] : tensor<1x2x3x8xf32> into tensor<48xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x6x8xf32>)
// CHECK-COUNT-2: arith.mulf
func.func @bilinear_2x(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %0 = "ecg.resize"(%x) {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>, sizes = array<i64: 1, 2, 6, 8>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Down-sampling: the rows first, so that the gathers of the innermost axis run on
// the smaller tensor.
// CHECK-LABEL: func.func @bilinear_half
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x2x8xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x2x4xf32>)
func.func @bilinear_half(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x2x4xf32> {
  %0 = "ecg.resize"(%x) {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 0.5, 0.5]> : tensor<4xf32>, sizes = array<i64: 1, 1, 2, 4>} : (tensor<1x1x4x8xf32>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

// Rows only: the reads are contiguous, their offsets index arithmetic that the
// vectorizer follows (the column's index plus the row's offset).
// CHECK-LABEL: func.func @rows_only
// CHECK: arith.constant dense<[0, 0, 4, 8, 4, 4, 8, 8]> : tensor<8xi32>
// CHECK: linalg.generic
// CHECK: %[[COLUMN:.*]] = linalg.index 3 : index
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[AT:.*]] = arith.addi %[[COLUMN]], %[[ROW]] : index
// CHECK: tensor.extract %{{.*}}[%[[AT]]] : tensor<12xf32>
func.func @rows_only(%x: tensor<1x1x3x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = "ecg.resize"(%x) {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f64, mode = "linear", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 1.3333334, 1.0]> : tensor<4xf32>, sizes = array<i64: 1, 1, 4, 4>} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// tf_crop_and_resize: where a coordinate falls outside the input, the
// extrapolation value (an i8 table per axis says where; none for an axis inside
// everywhere).
// CHECK-LABEL: func.func @crop_and_resize
// CHECK: arith.constant dense<[0, 1, 1, 1]> : tensor<4xi8>
// CHECK: %[[OUTSIDE:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[OUTSIDE]] : f32
// CHECK-NOT: arith.select
func.func @crop_and_resize(%x: tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32> {
  %0 = "ecg.resize"(%x) {antialias = 0 : i64, coordinate_transformation_mode = "tf_crop_and_resize", cubic_coeff_a = -7.500000e-01 : f64, exclude_outside = 0 : i64, extrapolation_value = 2.5 : f64, mode = "nearest", nearest_mode = "round_prefer_floor", roi = dense<[0.0, 0.0, -0.5, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>, scales = dense<[1.0, 1.0, 1.3333334, 0.75]> : tensor<4xf32>, sizes = array<i64: 1, 1, 4, 3>} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
  return %0 : tensor<1x1x4x3xf32>
}
