"""Transposes whose moved input rows are narrower than a register block, with the dims
that move together merged.

``transposes.py`` transposes in square blocks of 8 or 16 along the input's innermost
dim and the result's; rows narrower than 8 hold no block and move a lane at a time.
A 7x7 plane made channels-last (``[1, C, 7, 7] -> [7, 7, 1, C]``: the rows of a 1x1
convolution's panels over ResNet-50's last stage, ``panels_pass.py``) has rows of 7,
but its two dims move together, adjacent and in the same order on both sides: collapsed
(views), ``[1, C, 49] -> [49, 1, C]`` takes 16x16 blocks, the last partial one peeled
(``rows.py``).
"""

from __future__ import annotations

import math
from typing import Optional

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import element_bits, reassociation, static_tensor_type
from .transposes import BLOCKS


def merge_narrow_transposes(module: ir.Module) -> int:
    """Rewrite each ``linalg.transpose`` of 32-bit elements that ``moving_run`` finds a
    run of dims for over those dims collapsed; returns how many were rewritten."""
    count = 0
    for op in walk_ops(module.operation, {"linalg.transpose"}):
        x_t, out_t = static_tensor_type(op.operands[0]), static_tensor_type(op.results[0])
        if x_t is None or out_t is None or element_bits(out_t) != 32:
            continue
        permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        run = moving_run(permutation, list(x_t.shape))
        if run is not None:
            _collapse_run(op, permutation, *run)
            count += 1
    return count


def moving_run(permutation: list, shape: list) -> Optional[tuple]:
    """(first, count): the input dims ``first`` .. last that the transpose moves together,
    adjacent and in order in the result too, when the last one (the input's rows) is
    narrower than the smallest block, moves, and the run holds at least one block; else
    None. Result dim i is input dim ``permutation[i]``."""
    last = len(shape) - 1
    at = permutation.index(last)  # where the input's rows land in the result
    if at == last or shape[last] >= BLOCKS[-1]:
        return None
    first = last
    while first > 0 and at - (last - first) - 1 >= 0 and permutation[at - (last - first) - 1] == first - 1:
        first -= 1
    if first == last or math.prod(shape[first:]) < BLOCKS[-1]:
        return None
    return first, last - first + 1


def _groups(rank: int, start: int, count: int) -> list:
    """Reassociation of rank ``rank`` merging dims ``start`` .. ``start + count - 1``."""
    return [[d] for d in range(start)] + [list(range(start, start + count))] + [[d] for d in range(start + count, rank)]


def _collapsed(value: ir.Value, start: int, count: int) -> ir.Value:
    """``value`` with dims ``start`` .. ``start + count - 1`` collapsed into one (a view)."""
    t = static_tensor_type(value)
    shape = list(t.shape[:start]) + [math.prod(t.shape[start:start + count])] + list(t.shape[start + count:])
    return _mlir.tensor.collapse_shape(ir.RankedTensorType.get(shape, t.element_type), value,
                                       reassociation(_groups(t.rank, start, count)))


def _collapse_run(op, permutation: list, first: int, count: int) -> None:
    """Replace the transpose ``op`` by one over its input dims ``first`` .. ``first +
    count - 1`` collapsed, between views of its input, init and result."""
    rank = len(permutation)
    at = permutation.index(first)  # where the run starts in the result
    merged = [d if d < first else first if d < first + count else d - count + 1
              for i, d in enumerate(permutation) if not at < i < at + count]
    out_t = static_tensor_type(op.results[0])
    with ir.InsertionPoint(op), op.location:
        x = _collapsed(op.operands[0], first, count)
        init = _collapsed(op.operands[1], at, count)
        moved = _mlir.linalg.transpose(x, outs=[init], permutation=merged).results[0]
        result = _mlir.tensor.expand_shape(out_t, moved, reassociation(_groups(rank, at, count)), [], list(out_t.shape))
    op.results[0].replace_all_uses_with(result)
    op.erase()


__all__ = ["merge_narrow_transposes", "moving_run"]
