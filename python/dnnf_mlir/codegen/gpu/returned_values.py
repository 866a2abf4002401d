"""Values the entry function returns that no kernel computes, copied by a kernel.

A GPU program does nothing between its kernels but dispatch them (``program.py``).
A model may return a value no kernel computes: a constant (an output that rewriting
folded, ``Abs`` of an initializer) or one of its inputs as is (``Identity``). Bufferized,
the entry function copies it into its out-parameter, a loop or a store on the host
that no dispatch plan holds. Each such value is instead passed through a kernel
function of its own, which returns its argument (a constant is passed to it, a
weight like any other): the kernel copies it as it copies any result it passes on
(``returned_copies``), and the program is dispatches only.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...kernel_functions import KERNEL_ATTR, is_kernel, is_public
from ..linalg_queries import TENSOR_RESHAPES
from ..lowered_module import functions, symbol_name


def _computed_by_a_kernel(value, kernels: set) -> bool:
    """Whether ``value`` is a kernel function's result, directly or through reshapes
    (which the dispatch plan makes views of the kernel's buffer)."""
    while isinstance(value, ir.OpResult) and value.owner.name in TENSOR_RESHAPES:
        value = value.owner.operands[0]
    return isinstance(value, ir.OpResult) and value.owner.name == "func.call" and \
        ir.FlatSymbolRefAttr(value.owner.attributes["callee"]).value in kernels


def _passing_kernel(module: ir.Module, name: str, tensor_type):
    """A kernel function ``name`` returning its one argument, at the end of ``module``."""
    with ir.InsertionPoint(module.body), ir.Location.unknown():
        function = _mlir.func.FuncOp(name, ir.FunctionType.get([tensor_type], [tensor_type]), visibility="private")
        function.attributes[KERNEL_ATTR] = ir.UnitAttr.get()
        block = function.add_entry_block()
        with ir.InsertionPoint(block):
            _mlir.func.ReturnOp([block.arguments[0]])
    return function


def returned_values_to_kernels(module: ir.Module) -> int:
    """Pass every value that the public functions of ``module`` return and no kernel
    computes through a kernel of its own (see the module docstring); returns how many."""
    kernels = {symbol_name(f) for f in functions(module) if is_kernel(f.operation)}
    entries = [f for f in functions(module) if is_public(f.operation) and not is_kernel(f.operation)]
    copied = 0
    for entry in entries:
        terminator = list(entry.regions[0].blocks[0].operations)[-1]
        for index, value in enumerate(list(terminator.operands)):
            if not isinstance(value.type, ir.RankedTensorType) or _computed_by_a_kernel(value, kernels):
                continue
            name = f"kernel_{len(kernels)}_copy"
            while name in kernels:
                name += "_"
            kernels.add(name)
            _passing_kernel(module, name, value.type)
            with ir.InsertionPoint(terminator), terminator.location:
                call = _mlir.func.CallOp([value.type], ir.FlatSymbolRefAttr.get(name), [value])
            terminator.operands[index] = call.results[0]
            copied += 1
    return copied


__all__ = ["returned_values_to_kernels"]
