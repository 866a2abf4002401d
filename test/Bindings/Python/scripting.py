# RUN: %PYTHON %s | FileCheck %s
# Scripting dnnf-mlir from Python: build an ECG function op by op, walk it, ask ops
# for their mapping type and algebra, run a pipeline, interpret the result.

import numpy as np

import dnnf_mlir
from dnnf_mlir import ecg
from dnnf_mlir._mlir import func, ir
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.transforms.pipeline import build_pass_manager

context = dnnf_mlir.make_context()
with context, ir.Location.unknown():
    module = ir.Module.create()
    x_type = ecg.to_mlir(ecg.TensorSpec((2, 4), np.float32))
    with ir.InsertionPoint(module.body):

        @func.FuncOp.from_py_func(x_type, name="main")
        def main(x):
            weight = ecg.OPS["constant"].build([], {"value": np.eye(4, dtype=np.float32)}).output
            product = ecg.OPS["mat_mul"].build([x, weight], loc=ir.Location.name("matmul")).output
            scaled = ecg.OPS["mul"].build([product, product]).output
            unused = ecg.OPS["exp"].build([x]).output
            return ecg.OPS["relu"].build([scaled]).output

    print(module)
    # CHECK-LABEL: func.func @main
    # CHECK: "ecg.mat_mul"
    # CHECK: "ecg.exp"

    for op in main.func_op.entry_block.operations:
        if isinstance(op, ecg.ECGOp):
            print(f"{op.mnemonic}: {op.mapping_type}; {op.algebra.describe()}; flops={op.flops()} bytes={op.result_bytes()}")
    # CHECK: constant: One-to-One; none; flops=0 bytes=64
    # CHECK: mat_mul: Many-to-Many; {{.*}}; flops=64 bytes=32
    # CHECK: mul: One-to-One; commutative; associative; distributes over add, sub; identity 1; absorbing 0; flops=8 bytes=32
    # CHECK: exp: One-to-One; commutes with Reorganize, Shuffle; f(add(a, b)) = mul(f(a), f(b)); {{.*}}; flops=8 bytes=32
    # CHECK: relu: One-to-One; commutes with Reorganize, Shuffle; f(max(a, b)) = max(f(a), f(b)); {{.*}}; flops=8 bytes=32

    build_pass_manager("builtin.module(canonicalize)", context).run(module.operation)
    print([op.operation.name for op in main.func_op.entry_block.operations])
    # CHECK: ['ecg.constant', 'ecg.mat_mul', 'ecg.mul', 'ecg.relu', 'func.return']

    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    (y,) = interpret(module, [x])
    print(np.array_equal(y, np.maximum(x * x, 0)))
    # CHECK: True
