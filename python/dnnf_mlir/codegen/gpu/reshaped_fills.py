"""Accumulator fills made the shape of the op they initialize.

A merged projection split into its Q, K and V copies (``slices.py``) has each copy's
heads reshape propagated into it by the prepare pipeline (each copy then computes the
[S, H, D] layout its transpose reads, and the matmul schedule applies to it,
``epilogue_dims``). The propagation leaves the copies' shared accumulator fill
unreshaped, read through a ``tensor.expand_shape``: an init seen through a view is no
producer the schedules fuse (``kernels._data_operands``), so the fill would be computed
outside the dispatch's loops. Each such init becomes a fill of its own, of the op's
shape.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ..linalg_queries import static_tensor_type
from ..lowered_module import walk_ops

RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


def _fill_value(op):
    """The scalar a ``linalg.generic`` of no inputs fills its result with (a generalized
    ``linalg.fill``), or None for another op."""
    if op.name != "linalg.generic" or len(op.operands) != len(op.results) or len(op.results) != 1:
        return None
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 1:
        return None
    value = body[0].operands[0]
    return value if not isinstance(value, ir.BlockArgument) else None


def fills_of_own_shape(module: ir.Module) -> int:
    """Replace each linalg op's init that is a reshape of a fill by a fill of an empty
    tensor of the init's shape; returns how many."""
    replaced = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        for index in range(len(op.operands) - len(op.results), len(op.operands)):
            value = op.operands[index]
            reshape = value.owner if isinstance(value, ir.OpResult) else None
            if reshape is None or reshape.name not in RESHAPES or not isinstance(reshape.operands[0], ir.OpResult):
                continue
            scalar = _fill_value(reshape.operands[0].owner)
            tensor = static_tensor_type(value)
            if scalar is None or tensor is None:
                continue
            with ir.InsertionPoint(op), op.location:
                empty = _mlir.tensor.empty(tensor.shape, tensor.element_type)
                op.operands[index] = _mlir.linalg.fill(scalar, outs=[empty])
            replaced += 1
    return replaced


__all__ = ["fills_of_own_shape"]
