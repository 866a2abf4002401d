// A chain of 33 Adds reading 34 arguments: one block would have 34 inputs, more than
// an ecg.fused op takes (MAX_FUSED_INPUTS = 32). The chain splits into a block with
// exactly 32 inputs and one with the rest.
// RUN: dnnf-opt %s --ecg-fuse=stats-file=%t.json | FileCheck %s
// RUN: dnnf-opt %s --ecg-fuse=mode=tvm | FileCheck %s --check-prefix=TVM
// RUN: FileCheck %s --check-prefix=STATS < %t.json

// CHECK-LABEL: func.func @chain
// CHECK:         %[[F:.*]] = "ecg.fused"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12, %arg13, %arg14, %arg15, %arg16, %arg17, %arg18, %arg19, %arg20, %arg21, %arg22, %arg23, %arg24, %arg25, %arg26, %arg27, %arg28, %arg29, %arg30, %arg31) ({
// CHECK:         "ecg.fused"(%[[F]], %arg32, %arg33) ({
// CHECK-NOT:     "ecg.fused"
// TVM-LABEL:   func.func @chain
// TVM-COUNT-2:   "ecg.fused"
// TVM-NOT:       "ecg.fused"
// STATS:       "blocks": 2,
// STATS:       "inputs": 1
func.func @chain(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>, %a3: tensor<4xf32>, %a4: tensor<4xf32>, %a5: tensor<4xf32>, %a6: tensor<4xf32>, %a7: tensor<4xf32>, %a8: tensor<4xf32>, %a9: tensor<4xf32>, %a10: tensor<4xf32>, %a11: tensor<4xf32>, %a12: tensor<4xf32>, %a13: tensor<4xf32>, %a14: tensor<4xf32>, %a15: tensor<4xf32>, %a16: tensor<4xf32>, %a17: tensor<4xf32>, %a18: tensor<4xf32>, %a19: tensor<4xf32>, %a20: tensor<4xf32>, %a21: tensor<4xf32>, %a22: tensor<4xf32>, %a23: tensor<4xf32>, %a24: tensor<4xf32>, %a25: tensor<4xf32>, %a26: tensor<4xf32>, %a27: tensor<4xf32>, %a28: tensor<4xf32>, %a29: tensor<4xf32>, %a30: tensor<4xf32>, %a31: tensor<4xf32>, %a32: tensor<4xf32>, %a33: tensor<4xf32>) -> tensor<4xf32> {
  %s0 = "ecg.add"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s1 = "ecg.add"(%s0, %a2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = "ecg.add"(%s1, %a3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s3 = "ecg.add"(%s2, %a4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s4 = "ecg.add"(%s3, %a5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s5 = "ecg.add"(%s4, %a6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s6 = "ecg.add"(%s5, %a7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s7 = "ecg.add"(%s6, %a8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s8 = "ecg.add"(%s7, %a9) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s9 = "ecg.add"(%s8, %a10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s10 = "ecg.add"(%s9, %a11) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s11 = "ecg.add"(%s10, %a12) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s12 = "ecg.add"(%s11, %a13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s13 = "ecg.add"(%s12, %a14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s14 = "ecg.add"(%s13, %a15) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s15 = "ecg.add"(%s14, %a16) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s16 = "ecg.add"(%s15, %a17) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s17 = "ecg.add"(%s16, %a18) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s18 = "ecg.add"(%s17, %a19) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s19 = "ecg.add"(%s18, %a20) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s20 = "ecg.add"(%s19, %a21) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s21 = "ecg.add"(%s20, %a22) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s22 = "ecg.add"(%s21, %a23) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s23 = "ecg.add"(%s22, %a24) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s24 = "ecg.add"(%s23, %a25) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s25 = "ecg.add"(%s24, %a26) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s26 = "ecg.add"(%s25, %a27) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s27 = "ecg.add"(%s26, %a28) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s28 = "ecg.add"(%s27, %a29) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s29 = "ecg.add"(%s28, %a30) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s30 = "ecg.add"(%s29, %a31) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s31 = "ecg.add"(%s30, %a32) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s32 = "ecg.add"(%s31, %a33) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s32 : tensor<4xf32>
}
