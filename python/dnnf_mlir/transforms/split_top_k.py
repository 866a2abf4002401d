"""ecg-split-top-k: a TopK over rows too long for one GPU thread as TopKs of chunks, then
a TopK of the chunks' winners.

A GPU runs a TopK row per thread (``codegen/gpu/loop_kernels.py``), and lavapipe ends
a thread's loops after 65535 iterations, silently (``codegen/gpu/loop_budget.py``). How
many a row costs depends on the data (an element that enters the k best costs an
insertion or a sift), so the budget is checked against the worst case,
``row_loop_iterations``. A row over it is cut into c chunks of m elements (the last one
padded with the worst value: -inf for the largest, +inf for the smallest, the integer
extremes), each chunk's k best taken by a TopK of rows of m (a thread each), their
indices made the row's (+ the chunk's first), and the c * k winners' TopK taken in turn,
in as many levels as the candidates need; the indices of the last level pick the row's
indices of the winners (``gather_elements``). Ties keep ONNX's order: the winners of a
chunk come best first, lower index first among equals, and the chunks in row order, so
among equal values a lower position in the candidates is a lower index in the row; the
padding lies after every element and is no better than any, so it never wins a place a
real element can take (k <= n).
"""

from __future__ import annotations

import math

import numpy as np

from .._mlir import ir
from ..conversion.ecg_to_linalg.top_k import row_loop_iterations
from ..ecg.base import OPS
from ..ecg.recurrent_cells import OpEmitter
from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import from_mlir
from ..ir_walk import walk_ops
from .pass_base import ModulePass, PassError
from .registry import described_by_table


def chunk_length(k: int, budget: int, op=None) -> int:
    """The longest chunk whose TopK of ``k`` a thread runs within ``budget`` loop iterations,
    at least 2k (a level must halve the candidates at worst); a ``PassError`` if none."""
    if row_loop_iterations(2 * k, k) > budget:
        raise PassError(f"TopK with k = {k} does not fit a GPU thread's loop budget: the TopK of a chunk of {2 * k} "
                        f"elements (2k) runs up to {row_loop_iterations(2 * k, k)} loop iterations a thread, past "
                        f"the {budget} allowed (lavapipe ends a thread's loops there, silently)", op)
    low, high = 2 * k, 2 * k
    while row_loop_iterations(2 * high, k) <= budget:
        high *= 2
    high *= 2
    while high - low > 1:  # row_loop_iterations grows with the length
        middle = (low + high) // 2
        low, high = (middle, high) if row_loop_iterations(middle, k) <= budget else (low, middle)
    return low


def _worst(dtype: np.dtype, largest: bool) -> float:
    """The padding: no element comes after it."""
    if np.issubdtype(dtype, np.floating):
        return -math.inf if largest else math.inf
    info = np.iinfo(dtype)
    return float(info.min if largest else info.max)


def _split(emitter: OpEmitter, x, axis: int, k: int, largest: int, chunk: int):
    """One level: the k best of each chunk of ``chunk`` along ``axis`` of ``x``, as
    (candidates' values, their positions in ``x`` along ``axis``), c * k of each per row,
    and the length of ``x`` padded (positions of the padding lie before it)."""
    shape = list(from_mlir(x.type).shape)
    n = shape[axis]
    chunks = -(-n // chunk)
    chunk = -(-n // chunks)  # the same count of chunks, as even as can be
    pad = chunks * chunk - n
    if pad:
        pads = [0] * (2 * len(shape))
        pads[len(shape) + axis] = pad
        (x,) = emitter.emit("pad", [x], {"pads": pads, "constant_value": _worst(from_mlir(x.type).dtype, largest)})
    (rows,) = emitter.emit("reshape", [x], {"shape": shape[:axis] + [chunks, chunk] + shape[axis + 1:]})
    values, positions = emitter.emit("top_k", [rows], {"axis": axis + 1, "k": k, "largest": largest})
    firsts = (np.arange(chunks, dtype=np.int64) * chunk).reshape([chunks, 1] + [1] * (len(shape) - axis - 1))
    (positions,) = emitter.emit("add", [positions, firsts])
    joined = shape[:axis] + [chunks * k] + shape[axis + 1:]
    return [emitter.emit("reshape", [v], {"shape": joined})[0] for v in (values, positions)] + [n + pad]


def split_top_k(operation, budget: int) -> bool:
    """Replace the TopK ``operation`` by levels of chunks when a row costs a thread more than
    ``budget`` loop iterations; whether it did."""
    view = operation.opview
    attrs = view.attrs
    shape = from_mlir(operation.operands[0].type).shape
    axis = normalize_axis(attrs["axis"], len(shape))
    k, largest = attrs["k"], attrs["largest"]
    if row_loop_iterations(shape[axis], k) <= budget:
        return False
    chunk = chunk_length(k, budget, operation)
    emitter = OpEmitter()
    with ir.InsertionPoint(operation), operation.location:
        candidates, rows_positions = operation.operands[0], None
        while row_loop_iterations(from_mlir(candidates.type).shape[axis], k) > budget:
            candidates, positions, padded = _split(emitter, candidates, axis, k, largest, chunk)
            if rows_positions is not None:  # the positions of this level's input in the row
                positions = _picked(emitter, rows_positions, positions, axis, padded)
            rows_positions = positions
        values, positions = emitter.emit("top_k", [candidates], {"axis": axis, "k": k, "largest": largest})
        indices = _picked(emitter, rows_positions, positions, axis, from_mlir(candidates.type).shape[axis])
    operation.results[0].replace_all_uses_with(values)
    operation.results[1].replace_all_uses_with(indices)
    operation.erase()
    return True


def _picked(emitter: OpEmitter, rows_positions, positions, axis: int, padded: int):
    """``rows_positions`` at ``positions`` along ``axis``, read from a copy padded to
    ``padded`` (a position of the padding reads a 0 there: it is never among the k best)."""
    shape = from_mlir(rows_positions.type).shape
    if padded > shape[axis]:
        pads = [0] * (2 * len(shape))
        pads[len(shape) + axis] = padded - shape[axis]
        (rows_positions,) = emitter.emit("pad", [rows_positions], {"pads": pads, "constant_value": 0.0})
    return emitter.emit("gather_elements", [rows_positions, positions], {"axis": axis})[0]


def split_top_ks(root, budget: int) -> int:
    """``split_top_k`` on every TopK under ``root``; how many it split."""
    return sum(split_top_k(op, budget) for op in walk_ops(root, {"ecg.top_k"}))


@described_by_table
class SplitTopKPass(ModulePass):
    """Splits each TopK whose rows would run past a GPU thread's loop budget."""

    NAME = "ecg-split-top-k"

    def run(self, module):
        split_top_ks(module, self.options["max-iterations"])


__all__ = ["SplitTopKPass", "chunk_length", "split_top_k", "split_top_ks"]
