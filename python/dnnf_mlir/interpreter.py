"""The reference interpreter: runs ECG functions with each op's numpy semantics.

It defines what an ECG program means; compiled code is checked against it and it
is checked against onnxruntime. Calls run their callee (the kernel functions of
``ecg-outline-kernels``).
"""

from typing import Sequence

import numpy as np

from ._mlir import ir
from .ecg import ECGOp, TensorSpec, from_mlir


class InterpreterError(Exception):
    pass


def find_function(module: ir.Module, name: str = "main"):
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.attributes["sym_name"].value == name:
            return op
    raise InterpreterError(f"no function @{name} in the module")


def interpret(module: ir.Module, inputs: Sequence[np.ndarray], entry: str = "main") -> list:
    """Run ``@entry`` on ``inputs`` and return its results as numpy arrays."""
    function = find_function(module, entry)
    block = function.regions[0].blocks[0]
    arguments = list(block.arguments)
    if len(inputs) != len(arguments):
        raise InterpreterError(f"@{entry} takes {len(arguments)} inputs, got {len(inputs)}")
    for index, (argument, value) in enumerate(zip(arguments, inputs)):
        expected = from_mlir(argument.type)
        if TensorSpec.of(np.asarray(value)) != expected:
            raise InterpreterError(f"input {index} must be {expected}, got {TensorSpec.of(np.asarray(value))}")
    return run_block(block, [np.asarray(v) for v in inputs], terminator="func.return")


def run_block(block: ir.Block, arguments: Sequence[np.ndarray], terminator: str) -> list:
    env = {}
    for argument, value in zip(block.arguments, arguments):
        env[argument] = value
    for op in block.operations:
        operands = [env[v] for v in op.operands]
        if op.operation.name == terminator:
            return operands
        results = evaluate(op, operands)
        for result, value in zip(op.results, results):
            env[result] = value
    raise InterpreterError(f"block does not end with '{terminator}'")


def _callee(call):
    """The ``func.func`` a ``func.call`` names, from the symbol table of its module."""
    module = call.parent
    while module.name != "builtin.module":
        module = module.parent
    try:
        return ir.SymbolTable(module)[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
    except KeyError:
        raise InterpreterError(f"'{call.name}' at {call.location}: no callee in the module") from None


def evaluate(op, operands: Sequence[np.ndarray]) -> list:
    view = op.opview if hasattr(op, "opview") else op
    if view.operation.name == "ecg.fused":
        return run_block(view.body.blocks[0], operands, terminator="ecg.yield")
    if view.operation.name == "func.call":
        return run_block(_callee(view.operation).regions[0].blocks[0], operands, terminator="func.return")
    if not isinstance(view, ECGOp):
        raise InterpreterError(f"cannot interpret '{view.operation.name}' at {view.location}")
    try:
        results = view.reference(operands, view.attrs, view.result_specs)
    except IndexError as error:  # indices out of range: ONNX's run-time error
        raise InterpreterError(f"'{view.operation.name}' at {view.location}: {error}") from None
    for value, spec in zip(results, view.result_specs):
        if TensorSpec.of(value) != spec:
            raise InterpreterError(
                f"'{view.operation.name}' at {view.location} produced {TensorSpec.of(value)}, expected {spec}"
            )
    return results
