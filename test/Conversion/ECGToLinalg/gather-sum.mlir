// ecg.gather_sum (GridSample's taps, frontend/onnx_grid_sample.py) as one generic: the tap
// loop a reduction whose body reads a row of the data through its 1-d view and adds it,
// weighted, to the accumulator. On the CPU (codegen/cpu/gather_sums.py) each row of
// channels is one vector, the taps a loop inside it: one contiguous load per tap (not a
// vector.gather across taps), the accumulator in registers across them (the fill
// folded into the loop's initial value), one store per row.
// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg | FileCheck %s --implicit-check-not=ecg.
// RUN: dnnf-opt %s --split-input-file --convert-ecg-to-linalg \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v3 | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @taps
// CHECK:       %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<9x8xf32> into tensor<72xf32>
// CHECK:       %[[ZERO:.*]] = linalg.fill
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["reduction", "parallel", "parallel", "parallel"]
// CHECK-SAME:    ins(%arg1, %arg2 : tensor<4x2x3xi64>, tensor<4x2x3xf32>) outs(%[[ZERO]] : tensor<2x3x8xf32>)
// CHECK:         arith.maxsi
// CHECK:         arith.minsi
// CHECK:         tensor.extract %[[FLAT]]
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CPU-LABEL: func.func @taps
// CPU:         scf.for
// CPU:           scf.for
// CPU:             scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%{{.*}}) -> (vector<1x1x8xf32>)
// CPU:               vector.transfer_read %{{.*}} : tensor<72xf32>, vector<1x1x1x8xf32>
// CPU:               arith.mulf
// CPU:               arith.addf %{{.*}} : vector<1x1x8xf32>
// CPU:             vector.transfer_write
// CPU-NOT:         vector.gather
// CPU-NOT:         linalg.generic
func.func @taps(%d: tensor<9x8xf32>, %i: tensor<4x2x3xi64>, %w: tensor<4x2x3xf32>) -> tensor<2x3x8xf32> {
  %0 = "ecg.gather_sum"(%d, %i, %w) : (tensor<9x8xf32>, tensor<4x2x3xi64>, tensor<4x2x3xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}
