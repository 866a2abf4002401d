// RUN: dnnf-opt %s --split-input-file --ecg-outline-kernels | FileCheck %s
// The outlined module is still valid ECG and lowers like any other.
// RUN: dnnf-opt %s --split-input-file --pass-pipeline='builtin.module(ecg-outline-kernels,convert-ecg-to-linalg)' -o /dev/null
// Running the pass again changes nothing: the public functions hold only calls.
// RUN: dnnf-opt %s --split-input-file --ecg-outline-kernels --ecg-outline-kernels | FileCheck %s --check-prefix=TWICE

// Each unfused op is a kernel of its own; identical ops (same op, attributes, types)
// are one function called from every site.
// CHECK: module attributes {dnnf.kernels.launched = 3 : i64, dnnf.kernels.unique = 2 : i64}
// CHECK-LABEL: func.func @unfused(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = call @kernel_0_relu(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = call @kernel_1_neg(%[[A]])
// CHECK-NEXT: %[[C:.*]] = call @kernel_0_relu(%[[B]])
// CHECK-NEXT: return %[[C]]
// CHECK-LABEL: func.func private @kernel_0_relu(
// CHECK-SAME: %[[ARG:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {dnnf.kernel}
// CHECK-NEXT: %[[R:.*]] = "ecg.relu"(%[[ARG]])
// CHECK-NEXT: return %[[R]]
// CHECK-LABEL: func.func private @kernel_1_neg(
// CHECK-NOT: func.func
// TWICE: module attributes {dnnf.kernels.launched = 3 : i64, dnnf.kernels.unique = 2 : i64}
// TWICE-LABEL: func.func @unfused(
// TWICE-COUNT-3: call @kernel_
// TWICE: func.func private @kernel_0_relu(
// TWICE: func.func private @kernel_1_neg(
// TWICE-NOT: func.func
// TWICE: // -----
func.func @unfused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ecg.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ecg.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ecg.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A fusion block is one function: its block arguments are the arguments, its yield
// the return. The weight (64 elements, not a splat) stays in the caller and is
// passed; the splat bias is cloned into the kernel, where the code generator folds it.
// CHECK: module attributes {dnnf.kernels.launched = 1 : i64, dnnf.kernels.unique = 1 : i64}
// CHECK-LABEL: func.func @matmul_add_relu(
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32>
// CHECK-NEXT: %[[W:.*]] = "ecg.constant"() {value = dense<{{.*}}> : tensor<8x8xf32>}
// CHECK-NEXT: %[[Y:.*]] = call @kernel_0_mat_mul_add_relu(%[[X]], %[[W]]) : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-LABEL: func.func private @kernel_0_mat_mul_add_relu(
// CHECK-SAME: %[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8x8xf32>) -> tensor<2x8xf32> attributes {dnnf.kernel}
// CHECK-NEXT: %[[BIAS:.*]] = "ecg.constant"() {value = dense<1.000000e+00> : tensor<8xf32>}
// CHECK-NEXT: %[[M:.*]] = "ecg.mat_mul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[S:.*]] = "ecg.add"(%[[M]], %[[BIAS]])
// CHECK-NEXT: %[[R:.*]] = "ecg.relu"(%[[S]])
// CHECK-NEXT: return %[[R]] : tensor<2x8xf32>
func.func @matmul_add_relu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = "ecg.constant"() {value = dense<"0x000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42"> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %b = "ecg.constant"() {value = dense<1.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %0 = "ecg.fused"(%x, %w, %b) ({
  ^bb0(%a: tensor<2x8xf32>, %bw: tensor<8x8xf32>, %bb: tensor<8xf32>):
    %m = "ecg.mat_mul"(%a, %bw) : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %s = "ecg.add"(%m, %bb) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %r = "ecg.relu"(%s) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    "ecg.yield"(%r) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x8xf32>) -> ()
  }) {mapping = "Many-to-Many", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Constants: fewer than 64 elements (a shape, a scalar table) are cloned into each
// kernel using them and leave the caller; a weight a fusion block holds is hoisted
// into the caller and passed, so two blocks differing only in their weights are one
// function.
// CHECK: module attributes {dnnf.kernels.launched = 2 : i64, dnnf.kernels.unique = 1 : i64}
// CHECK-LABEL: func.func @constants(
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32>
// CHECK-NEXT: %[[W1:.*]] = "ecg.constant"() {value = dense<{{\[\[}}0.000000e+00, 1.000000e+00
// CHECK-NEXT: %[[Y1:.*]] = call @kernel_0_mat_mul_add(%[[X]], %[[W1]])
// CHECK-NEXT: %[[W2:.*]] = "ecg.constant"() {value = dense<{{\[\[}}0.000000e+00, -1.000000e+00
// CHECK-NEXT: %[[Y2:.*]] = call @kernel_0_mat_mul_add(%[[X]], %[[W2]])
// CHECK-LABEL: func.func private @kernel_0_mat_mul_add(
// CHECK-SAME: %{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: "ecg.constant"() {value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<8xf32>}
// CHECK-NOT: func.func
func.func @constants(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %b = "ecg.constant"() {value = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>} : () -> tensor<8xf32>
  %0 = "ecg.fused"(%x, %b) ({
  ^bb0(%a: tensor<2x8xf32>, %bb: tensor<8xf32>):
    %w = "ecg.constant"() {value = dense<"0x000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42"> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
    %m = "ecg.mat_mul"(%a, %w) : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %s = "ecg.add"(%m, %bb) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    "ecg.yield"(%s) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x8xf32>) -> ()
  }) {mapping = "Many-to-Many", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = "ecg.fused"(%x, %b) ({
  ^bb0(%a: tensor<2x8xf32>, %bb: tensor<8xf32>):
    %w = "ecg.constant"() {value = dense<"0x00000000000080BF000000C0000040C0000080C00000A0C00000C0C00000E0C0000000C1000010C1000020C1000030C1000040C1000050C1000060C1000070C1000080C1000088C1000090C1000098C10000A0C10000A8C10000B0C10000B8C10000C0C10000C8C10000D0C10000D8C10000E0C10000E8C10000F0C10000F8C1000000C2000004C2000008C200000CC2000010C2000014C2000018C200001CC2000020C2000024C2000028C200002CC2000030C2000034C2000038C200003CC2000040C2000044C2000048C200004CC2000050C2000054C2000058C200005CC2000060C2000064C2000068C200006CC2000070C2000074C2000078C200007CC2"> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
    %m = "ecg.mat_mul"(%a, %w) : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %s = "ecg.add"(%m, %bb) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    "ecg.yield"(%s) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x8xf32>) -> ()
  }) {mapping = "Many-to-Many", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A block with several results, and a value passed twice is one argument. Private
// functions are left alone (the compiled entry point is the one public function).
// CHECK: module attributes {dnnf.kernels.launched = 1 : i64, dnnf.kernels.unique = 1 : i64}
// CHECK-LABEL: func.func @two_results(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
// CHECK-NEXT: %[[R:.*]]:2 = call @kernel_0_add_exp(%[[X]]) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: return %[[R]]#1, %[[R]]#0
// CHECK-LABEL: func.func private @helper(
// CHECK-NEXT: "ecg.neg"
// CHECK-LABEL: func.func private @kernel_0_add_exp(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %[[S:.*]] = "ecg.add"(%[[A]], %[[A]])
// CHECK-NEXT: %[[E:.*]] = "ecg.exp"(%[[S]])
// CHECK-NEXT: return %[[S]], %[[E]]
func.func @two_results(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "ecg.fused"(%x, %x) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = "ecg.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %e = "ecg.exp"(%s) : (tensor<4xf32>) -> tensor<4xf32>
    "ecg.yield"(%s, %e) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {mapping = "One-to-One", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#1, %0#0 : tensor<4xf32>, tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ecg.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
