// A stride-2 first layer (3 input channels, 224x224 image; codegen/cpu/conv.py) on a pinned
// AVX-512 CPU (x86-64-v4): its two phases (split_strided_convolutions) are computed in the
// same register tiles, one after the other, the accumulators carried in registers from
// the phase of the taps kw = 0, 2 to the phase of kw = 1 (accumulated_convolutions), and
// the output width (111 = 3 x 32 + 15) is not padded: the last column tile is peeled
// (tiles.peeled_conv_columns) and the tiles, the bias and ReLU applied, are stored into
// the model's output, with no copy of the columns it has out of a widened result. The
// transposing copy of the phases reads the image as it is (no padded copy).
// SqueezeNet's first layer: 0.41 -> 0.27 ms (AVX-512, 1 thread, minimum of 60 interleaved runs).
// RUN: %PYTHON -m dnnf_mlir.codegen %s --cpu=x86-64-v4 --emit=schedules | FileCheck %s --check-prefix=PLAN
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=cpu=x86-64-v4 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=cpu=x86-64-v4 \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=cpu=x86-64-v4 | FileCheck %s

// PLAN: linalg.generic [1, 3, 224, 2, 112] vectorized {'vector': [1, 1, 1, 2, 112]} @stem_3x3
// PLAN-NEXT: linalg.conv_2d_nchw_fchw [1, 64, 111, 111, 3, 3, 1] conv2d {'register_tile': (8, 32), 'phases': 2, 'epilogue': '{{k[0-9]+}}', 'peeled_columns': 15, 'unrolled': {{\[\[}}2, 3], [3]]} @stem_3x3

// CHECK-LABEL: func.func @stem_3x3(
// CHECK-SAME:      %[[OUT:[^:]*]]: memref<1x64x111x111xf32>
// CHECK-NOT:     memref.alloc() {{.*}} : memref<1x64x111x
// CHECK:         %[[PHASES:.*]] = memref.alloc() {{.*}} : memref<1x3x224x2x112xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c96 step %c32
// CHECK:           %[[P0:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<1x8x32xf32>)
// CHECK:             vector.transfer_read %[[PHASES]][%c0, %{{.*}}, %{{.*}}, %c0, %{{.*}}]
// CHECK:           %[[P1:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[P0]]) -> (vector<1x8x32xf32>)
// CHECK:             vector.transfer_read %[[PHASES]][%c0, %{{.*}}, %{{.*}}, %c1, %{{.*}}]
// CHECK:           arith.maximumf
// CHECK:           vector.transfer_write %{{.*}}, %[[OUT]][%c0, %{{.*}}, %{{.*}}, %{{.*}}] {{.*}} : vector<1x8x1x32xf32>, memref<1x64x111x111xf32>
// CHECK:         %[[Q0:.*]] = scf.for {{.*}} -> (vector<1x8x15xf32>)
// CHECK:         %[[Q1:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Q0]]) -> (vector<1x8x15xf32>)
// CHECK:         vector.transfer_write %{{.*}}, %[[OUT]][%c0, %{{.*}}, %{{.*}}, %c96] {{.*}} : vector<1x8x1x15xf32>, memref<1x64x111x111xf32>
// CHECK-NOT:     linalg.copy
// CHECK-NOT:     memref.copy
func.func @stem_3x3(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x111x111xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x111x111xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x64x111x111xf32>) -> tensor<1x64x111x111xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x224x224xf32>, tensor<64x3x3x3xf32>) outs(%i : tensor<1x64x111x111xf32>) -> tensor<1x64x111x111xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%y, %b : tensor<1x64x111x111xf32>, tensor<64xf32>) outs(%e : tensor<1x64x111x111xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x64x111x111xf32>
  return %r : tensor<1x64x111x111xf32>
}

// -----

// ResNet's 7x7/2 first layer, padded by 3: phases of 4 and 3 taps (kw = 0, 2, 4, 6 and
// 1, 3, 5), 112 = 3 x 32 + 16 columns: the peeled tile is one whole vector.
// 1.34 -> 1.05 ms (AVX-512, 1 thread, minimum of 60 interleaved runs).
// The image is not copied into a padded input: its phases are written into the interior
// of a zeroed buffer of phase rows 116 floats apart (115 + 1; convolutions.padded_phases),
// from row 3 and column 1, with no padded 230x230 copy before them.

// PLAN: linalg.fill [1, 3, 230, 2, 116] vectorized {{.*}} @stem_7x7
// PLAN-NEXT: linalg.generic [1, 3, 224, 2, 112] vectorized {'vector': [1, 1, 1, 2, 112]} @stem_7x7
// PLAN-NEXT: linalg.conv_2d_nchw_fchw [1, 64, 112, 112, 3, 7, 3] conv2d {'register_tile': (8, 32), 'phases': 2, 'peeled_columns': 16, 'unrolled': {{\[\[}}4], [3]]} @stem_7x7

// CHECK-LABEL: func.func @stem_7x7(
// CHECK-SAME:      %[[X:[^:]*]]: memref<1x3x224x224xf32>, %{{[^:]*}}: memref<64x3x7x7xf32>, %[[OUT:[^:]*]]: memref<1x64x112x112xf32>
// CHECK-NOT:     memref.alloc() {{.*}} : memref<1x3x230x230xf32>
// CHECK:         %[[PHASES:.*]] = memref.alloc() {{.*}} : memref<1x3x230x232xf32>
// CHECK:         %[[ROWS:.*]] = memref.expand_shape %[[PHASES]] {{.*}} into memref<1x3x230x2x116xf32>
// CHECK:         memref.subview %[[ROWS]][0, 0, 3, 0, 1] [1, 3, 224, 2, 112]
// CHECK:         memref.expand_shape %[[X]] {{.*}} into memref<1x3x224x112x2xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<1x1x1x2x112xf32>, memref<1x1x1x2x112xf32, strided<[160080, 53360, 232, 116, 1], offset: ?>>
// CHECK:         memref.subview %[[PHASES]][0, 0, 0, 0] [1, 3, 230, 230] [1, 1, 1, 1] : memref<1x3x230x232xf32> to memref<1x3x230x230xf32, strided<[160080, 53360, 232, 1]>>
// CHECK:         scf.for %{{.*}} = %c0 to %c96 step %c32
// CHECK:           %[[P0:.*]] = scf.for {{.*}} -> (vector<1x8x32xf32>)
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[P0]]) -> (vector<1x8x32xf32>)
// CHECK:           vector.transfer_write {{.*}} : vector<1x8x32xf32>, memref<1x8x32xf32, strided<[802816, 12544, 1], offset: ?>>
// CHECK:         vector.transfer_write {{.*}} : vector<1x8x16xf32>, memref<1x8x16xf32, strided<[802816, 12544, 1], offset: ?>>
// CHECK-NOT:     linalg.copy
func.func @stem_7x7(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 3, 3] high[0, 0, 3, 3] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<1x3x224x224xf32> to tensor<1x3x230x230xf32>
  %e = tensor.empty() : tensor<1x64x112x112xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x64x112x112xf32>) -> tensor<1x64x112x112xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x3x230x230xf32>, tensor<64x3x7x7xf32>) outs(%i : tensor<1x64x112x112xf32>) -> tensor<1x64x112x112xf32>
  return %y : tensor<1x64x112x112xf32>
}
