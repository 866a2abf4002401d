"""ecg-flatten-concats: a concat of a concat (along the same axis) that other ops read too
reads the pieces instead, through a chain of its own.

A DenseNet block concatenates each layer's new channels onto the block's concat so far,
``c_k = concat(c_{k-1}, y_k)``, and each ``c_k`` is also read by layer k+1's batch
normalization. As written, every layer's kernel copies ``c_{k-1}`` whole into ``c_k``
(the block's concat re-written once per layer, most of its channels unchanged), and
``c_{k-1}`` must exist in memory for that copy. Concatenation is associative, so
``c_k = concat(x, y_1, ..., y_k)``; ECG's concat is binary, so that is a chain of its own
for each ``c_k`` (``_fresh_chain``) over the pieces, fused into the layer's kernel with
the rest: each ``y_k`` is written once, by the layer that computes it, and a concat read
only by a per-channel op (the batch normalization) is not built at all (the CPU's
``concat_pointwise.py`` computes that op piece by piece). The concat that other ops read
stays for them. dnnf-compile runs it for the CPU targets: the GPU kernels flatten nested
concatenations themselves (``codegen/gpu/concats.py``), and these chains took DenseNet on
lavapipe from 128 dispatches to 247.
"""

from __future__ import annotations

from .._mlir import ir
from ..ecg.base import OPS
from ..ecg.shapes import normalize_axis
from ..ir_walk import walk_ops
from .pass_base import ModulePass
from .registry import described_by_table


def _axis(concat) -> int:
    return normalize_axis(concat.opview.attrs["axis"], ir.RankedTensorType(concat.results[0].type).rank)


def _inner_concat(value, axis: int):
    """The concat along ``axis`` that produces ``value``, or None."""
    inner = value.owner.operation if isinstance(value, ir.OpResult) else None
    return inner if inner is not None and inner.name == "ecg.concat" and _axis(inner) == axis else None


def _fresh_chain(value, axis: int):
    """``value`` again: the chain of concats along ``axis`` that produces it built anew (at the
    current insertion point) over the same pieces; ``value`` itself when no concat produces it."""
    inner = _inner_concat(value, axis)
    if inner is None:
        return value
    pieces = [_fresh_chain(operand, axis) for operand in inner.operands]
    return OPS["concat"].build(pieces, {"axis": axis}).operation.results[0]


def flatten_concat(concat) -> bool:
    """Make ``concat`` read its own chain of the pieces where an operand is a concat along the
    same axis that other ops read too; whether it did."""
    axis, changed = _axis(concat), False
    for index, value in enumerate(concat.operands):
        if _inner_concat(value, axis) is not None and len(list(value.uses)) > 1:
            with ir.InsertionPoint(concat), concat.location:
                concat.operands[index] = _fresh_chain(value, axis)
            changed = True
    return changed


def flatten_concats(root) -> int:
    """``flatten_concat`` on every concat under ``root``, producers first; how many it changed."""
    return sum(flatten_concat(op) for op in list(walk_ops(root, {"ecg.concat"})))


@described_by_table
class FlattenConcatsPass(ModulePass):
    """Gives each concat of a shared concat along its axis a chain of its own over the pieces."""

    NAME = "ecg-flatten-concats"

    def run(self, module):
        flatten_concats(module)


__all__ = ["FlattenConcatsPass", "flatten_concat", "flatten_concats"]
