// Element-wise kernels over bool (i1) tensors are vectorized rows like any other
// (codegen/cpu/rows.py), and their vector loads and stores move a byte per lane, as a
// memref of i1 (ONNX bool) holds them (codegen/cpu/byte_bools.py): a vector<Nxi8> load
// truncated to i1, an i1 result zero-extended to i8 before its store; the tail of a
// row a masked load of i8 lanes. No load or store of a vector of i1 is left, which
// LLVM would lay out as packed bits. AVX2 (x86-64-v3) and AVX-512 (x86-64-v4).
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --emit=schedules | FileCheck %s --check-prefix=PLAN
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --stop-after=schedule | FileCheck %s --check-prefix=VECTOR
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v3 --stop-after=llvm | FileCheck %s --check-prefixes=LLVM,AVX2
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --cpu=x86-64-v4 --stop-after=llvm | FileCheck %s --check-prefixes=LLVM,AVX512
// RUN: dnnf-opt %s --convert-ecg-to-linalg | %PYTHON -m dnnf_mlir.codegen - --target=aarch64 --stop-after=llvm | FileCheck %s --check-prefixes=LLVM,NEON

// PLAN: k0 linalg.generic [5, 37] vectorized {'vector': [1, 37]} @mask
// PLAN: k1 linalg.generic [5, 37] vectorized {'vector': [1, 32]} @mask

// VECTOR-LABEL: func.func @mask
// VECTOR:         scf.for
// VECTOR:           %[[M:.*]] = vector.transfer_read %{{.*}} : tensor<1x37xi1>, vector<1x37xi1>
// VECTOR:           %[[NOT:.*]] = arith.xori %[[M]], %{{.*}} : vector<1x37xi1>
// VECTOR:           %[[AND:.*]] = arith.andi %{{.*}}, %[[NOT]] : vector<1x37xi1>
// VECTOR:           vector.transfer_write %[[AND]], %{{.*}} : vector<1x37xi1>, tensor<1x37xi1>
// VECTOR:         scf.for
// VECTOR:             %[[C:.*]] = vector.mask %{{.*}} { vector.transfer_read {{.*}} : tensor<1x?xi1>, vector<1x32xi1> }
// VECTOR:             arith.select %[[C]], %{{.*}}, %{{.*}} : vector<1x32xi1>, vector<1x32xf32>

// LLVM-LABEL: llvm.func @mask
// LLVM-NOT:     -> vector<{{[0-9]+}}xi1>
// LLVM:         %[[BYTES:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<37xi8>
// LLVM-NEXT:    %[[BOOLS:.*]] = llvm.trunc %[[BYTES]] : vector<37xi8> to vector<37xi1>
// LLVM:         llvm.xor %[[BOOLS]], %{{.*}} : vector<37xi1>
// LLVM:         %[[AND:.*]] = llvm.and %{{.*}} : vector<37xi1>
// LLVM:         %[[OUT:.*]] = llvm.zext %[[AND]] : vector<37xi1> to vector<37xi8>
// LLVM-NEXT:    llvm.store %[[OUT]], %{{.*}} : vector<37xi8>, !llvm.ptr
// AVX2:         %[[TAIL:.*]] = llvm.intr.masked.load {{.*}} -> vector<32xi8>
// AVX2-NEXT:    %[[COND:.*]] = llvm.trunc %[[TAIL]] : vector<32xi8> to vector<32xi1>
// AVX2:         llvm.select %[[COND]], %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xf32>
// NEON:         %[[TAIL:.*]] = llvm.intr.masked.load {{.*}} -> vector<16xi8>
// NEON-NEXT:    %[[COND:.*]] = llvm.trunc %[[TAIL]] : vector<16xi8> to vector<16xi1>
// NEON:         llvm.select %[[COND]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// AVX512:       %[[ROW:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<37xi8>
// AVX512-NEXT:  %[[COND:.*]] = llvm.trunc %[[ROW]] : vector<37xi8> to vector<37xi1>
// AVX512:       llvm.select %[[COND]], %{{.*}}, %{{.*}} : vector<37xi1>, vector<37xf32>
// LLVM-NOT:     -> vector<{{[0-9]+}}xi1>
// LLVM-NOT:     llvm.store %{{.*}} : vector<{{[0-9]+}}xi1>
func.func @mask(%x: tensor<5x37xf32>, %y: tensor<37xf32>, %m: tensor<5x37xi1>) -> (tensor<5x37xf32>, tensor<5x37xi1>) {
  %0 = "ecg.less"(%x, %y) : (tensor<5x37xf32>, tensor<37xf32>) -> tensor<5x37xi1>
  %1 = "ecg.not"(%m) : (tensor<5x37xi1>) -> tensor<5x37xi1>
  %2 = "ecg.and"(%0, %1) : (tensor<5x37xi1>, tensor<5x37xi1>) -> tensor<5x37xi1>
  %3 = "ecg.where"(%2, %x, %y) : (tensor<5x37xi1>, tensor<5x37xf32>, tensor<37xf32>) -> tensor<5x37xf32>
  return %3, %2 : tensor<5x37xf32>, tensor<5x37xi1>
}
