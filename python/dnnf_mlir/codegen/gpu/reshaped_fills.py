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
from ...ir_walk import walk_ops
from ..linalg_queries import TENSOR_RESHAPES, linalg_input_count, linalg_inputs, set_linalg_init, static_tensor_type



def fill_of(value):
    """The ``linalg.generic`` computing ``value`` from scalars only (a generalized fill),
    or None."""
    op = value.owner if isinstance(value, ir.OpResult) else None
    if op is None or op.name != "linalg.generic" or len(op.results) != 1:
        return None
    inputs = linalg_inputs(op)
    return op if not any(isinstance(v.type, ir.ShapedType) for v in inputs) else None


def own_fill(fill, shaped_type, ip):
    """A copy of ``fill`` (``fill_of``) at ``ip``, filling an empty tensor of ``shaped_type``
    (of the fill's rank)."""
    tensor = ir.RankedTensorType(shaped_type)
    with ip, fill.location:
        empty = _mlir.tensor.empty(tensor.shape, tensor.element_type)
        copy = fill.clone()
    set_linalg_init(copy, empty)
    copy.results[0].set_type(shaped_type)
    return copy.results[0]


def fill_value(fill):
    """The value ``fill`` (``fill_of``) fills with: its scalar input, or the value its body
    yields once canonicalization dropped that input."""
    if len(fill.operands) > 1:
        return fill.operands[0]
    value = list(fill.regions[0].blocks[0].operations)[-1].operands[0]
    return None if isinstance(value, ir.BlockArgument) else value


def fills_of_own_shape(module: ir.Module) -> int:
    """Replace each linalg op's init that is a reshape of a fill by a ``linalg.fill`` of an
    empty tensor of the init's shape (to be generalized); returns how many."""
    replaced = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        for index in range(linalg_input_count(op), len(op.operands)):
            value = op.operands[index]
            reshape = value.owner if isinstance(value, ir.OpResult) else None
            fill = fill_of(reshape.operands[0]) if reshape is not None and reshape.name in TENSOR_RESHAPES else None
            scalar = fill_value(fill) if fill is not None else None
            tensor = static_tensor_type(value)
            if scalar is None or tensor is None:
                continue
            with ir.InsertionPoint(op), op.location:
                empty = _mlir.tensor.empty(tensor.shape, tensor.element_type)
                op.operands[index] = _mlir.linalg.fill(scalar, outs=[empty])
            replaced += 1
    return replaced


__all__ = ["fill_of", "fill_value", "fills_of_own_shape", "own_fill"]
