"""Element-wise ops over rows narrower than a vector, their innermost loops merged.

The row schedule (``rows.py``) vectorizes the innermost loop, a row at a time: over
EfficientNet's ``[1, 1152, 7, 7]`` (the SiLU after a depthwise convolution), 8064
rows of 7 lanes each, one masked vector per row and the whole body (SiLU's exp
approximation, ~25 ops) computed for 16 lanes where 7 count. Here an all-parallel
``linalg.generic`` whose innermost loop is narrower than a vector gets it merged into
the loop before it, as long as every operand reads the two loops together (adjacent,
in that order: its two dims collapse, a view) or neither (a per-channel bias), and
again while the merged row is one tile of the row schedule (at most four vectors)
ending in a masked one: the SiLU above with its bias becomes ``[1, 1152, 49]`` (the
bias reads the channels), a SiLU alone one flat row. Measured (AVX-512, one thread,
against onnxruntime): SiLU alone on ``[1, 1152, 7, 7]`` from 3.9x to 1.0x
onnxruntime's time, on ``[1, 1152, 3, 3]`` from 3.6x to 0.55x. Operands
are collapsed (``tensor.collapse_shape``) and the result expanded back
(``tensor.expand_shape``), views both, which cancel between neighbours merged alike.

Left alone: the epilogues of contractions and generics reading ``linalg.index`` (as
``unit_dims.py``), operands read at compound indices (``2 * y + i``: an im2col copy),
operands that are slices not whole along the merged dims (a window's taps: their
collapse would be a copy), and operands read at constant indices past the merged loops'
count (a squeeze-and-excitation scale ``[1, C, 1, 1]`` read at ``(n, c, 0, 0)``: merged,
the vectorizer left the op scalar, 1.0x -> 3.2x onnxruntime's time on 1152 channels of
3x3), and the ops reading a reduction, or read by one whose result an op of their shape
reads back (a layer normalization's: one row group of ``row_fusion.py``, which one shape
keeps together).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import element_bits, indexing_maps, parallel_loops, producer, reassociation, static_tensor_type
from .rows import static_loop_ranges
from .target import CpuTarget
from .unit_dims import adopt_body, rebuildable


def merge_narrow_rows(module: ir.Module, target: CpuTarget) -> int:
    """Merge the innermost loops of the element-wise generics whose rows are narrower
    than a vector (see the module docstring); returns how many generics were rebuilt."""
    count = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        ranges = static_loop_ranges(op)
        if ranges is None or len(ranges) < 2 or not all(parallel_loops(op) or [False]) or not rebuildable(op):
            continue
        if not indexing_maps(op)[-1].is_permutation or _in_row_group(op):
            continue
        lanes = target.lanes(element_bits(static_tensor_type(op.results[0])))
        first = len(ranges) - 1  # the first loop of the merged tail
        while first > 0 and _ends_masked(math.prod(ranges[first:]), lanes) and _mergeable(op, first - 1, len(ranges)):
            first -= 1
        if first < len(ranges) - 1:
            _merge(op, first, len(ranges))
            count += 1
    return count


def _reduces(op) -> bool:
    return op.name == "linalg.reduce" or op.name == "linalg.generic" and not all(parallel_loops(op) or [True])


def _in_row_group(op) -> bool:
    """Whether ``op`` reads a reduction's result, or a reduction reads it whose result an
    element-wise op of ``op``'s shape reads back: a member of a row group
    (``row_fusion.py``: a layer normalization, a softmax), whose ops must keep one shape
    to be fused into the row's loop. A global pool's input (read back by no op of its
    shape) is not."""
    if any(source is not None and _reduces(source) for source in map(producer, op.operands)):
        return True
    shape = static_loop_ranges(op)
    for use in op.results[0].uses:
        if not _reduces(use.owner):
            continue
        readers = [u.owner for result in use.owner.results for u in result.uses]
        if any(r.name == "linalg.generic" and not _reduces(r) and static_loop_ranges(r) == shape for r in readers):
            return True
    return False


def _ends_masked(row: int, lanes: int) -> bool:
    """Whether a row of ``row`` elements is one tile of the row schedule (at most four
    vectors) ending in a masked vector."""
    return row < 4 * lanes and row % lanes != 0


def _dim_positions(amap) -> list:
    """The loop each result of ``amap`` reads (None for a result that is not a dim)."""
    return [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None for e in amap.results]


def _mergeable(op, loop: int, rank: int) -> bool:
    """Whether every operand of ``op`` reads loop ``loop`` and the merged tail after it
    (loops ``loop + 1`` .. ``rank - 1``, read adjacent and in order) adjacent and in
    order, or none of them, through dims that collapse as a view."""
    for value, amap in zip(op.operands, indexing_maps(op)):
        if not all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in amap.results):
            return False  # a window's or a stride's compound index (im2col's patches): no dim to collapse
        dims = _dim_positions(amap)
        if None in dims and len(dims) > loop + 1:
            return False  # constant indices past the merged loops' count: the vectorizer leaves the op scalar
        if loop not in dims and loop + 1 not in dims:
            continue
        if loop not in dims or loop + 1 not in dims or dims.index(loop + 1) != dims.index(loop) + 1:
            return False
        start = dims.index(loop)
        if not _contiguous(value, start, start + rank - loop):
            return False
    return True


def _contiguous(value, start: int, end: int) -> bool:
    """Whether dims ``start`` .. ``end - 1`` of ``value`` collapse as a view: ``value``
    is not a slice, or a unit-stride slice taking dims after ``start`` whole."""
    source = producer(value)
    if source is None or source.name != "tensor.extract_slice":
        return True
    whole = static_tensor_type(source.operands[0])
    sizes = list(ir.DenseI64ArrayAttr(source.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(source.attributes["static_strides"]))
    if whole is None or whole.rank != len(sizes) or static_tensor_type(value).rank != whole.rank:
        return False  # a rank-reducing slice: its dims do not line up with the source's
    return all(s == 1 for s in strides[start:end]) and all(sizes[d] == whole.shape[d] for d in range(start + 1, end))


def _merge(op, first: int, rank: int):
    """``op`` rebuilt with its loops ``first`` .. ``rank - 1`` merged into one."""
    count = rank - first
    operands, maps = [], []
    with ir.InsertionPoint(op), op.location:
        for value, amap in zip(op.operands, indexing_maps(op)):
            dims = _dim_positions(amap)
            maps.append(ir.AffineMap.get(first + 1, 0, [e for e, d in zip(amap.results, dims) if d is None or d <= first]))
            operands.append(_collapse(value, dims.index(first), count) if first in dims else value)
        inputs, outputs = operands[:-1], operands[-1:]
        iterators = ir.ArrayAttr.get(list(ir.ArrayAttr(op.attributes["iterator_types"]))[:first + 1])
        rebuilt = _mlir.linalg.GenericOp([o.type for o in outputs], inputs, outputs,
                                         ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]), iterators)
        adopt_body(op, rebuilt)
        out_type = static_tensor_type(op.results[0])
        groups = _groups(out_type.rank, _dim_positions(indexing_maps(op)[-1]).index(first), count)
        result = _mlir.tensor.expand_shape(out_type, rebuilt.results[0], reassociation(groups), [], list(out_type.shape))
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _groups(rank: int, start: int, count: int) -> list:
    """Reassociation of rank ``rank`` merging dims ``start`` .. ``start + count - 1``."""
    return [[d] for d in range(start)] + [list(range(start, start + count))] + [[d] for d in range(start + count, rank)]


def _collapse(value, start: int, count: int):
    """``value`` with its dims ``start`` .. ``start + count - 1`` collapsed into one."""
    t = static_tensor_type(value)
    shape = list(t.shape[:start]) + [math.prod(t.shape[start:start + count])] + list(t.shape[start + count:])
    return _mlir.tensor.collapse_shape(ir.RankedTensorType.get(shape, t.element_type), value,
                                       reassociation(_groups(t.rank, start, count)))


__all__ = ["merge_narrow_rows"]
