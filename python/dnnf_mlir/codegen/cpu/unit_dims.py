"""Unit dims folded out of the ops that the row schedules vectorize, before they are
scheduled: ``fold_unit_dims(module)``.

The row schedules (``rows.py``, ``row_fusion.py``) make the innermost loop the vector
dim. An op whose innermost loop has extent 1 (a ``[64, 64, 1]`` tensor, the
``[N, C, 1, 1]`` block after a global pool, a layer normalization over a trailing dim
of 1) became vectors of one element: scalar code, one load and store per element,
and a row unrolled into thousands of one-element vectors. Here every such
``linalg.generic`` / ``linalg.reduce`` is rebuilt over its loops of extent > 1, its
operands collapsed (``tensor.collapse_shape``) and its result expanded back
(``tensor.expand_shape``); views both, which cancel between neighbours folded alike
(canonicalization), so the innermost loop of extent > 1 becomes the vector dim.

So is a reduction whose innermost parallel loop has extent 1 (a global pool's
``[N, C, 1, 1]`` result over its window): its result, and the fill of its
accumulator, become ``[N, C]``. Ops whose innermost loops are not units are left
alone (their vectors are already whole), and so are reductions over unit loops only
(and the ops reading them), the epilogues of contractions (their kernels apply them in the
output tile and need them over the contraction's own shape), generics reading
``linalg.index`` (the body would see other loop numbers) and the matrix-vector
partial sums (``matvec.py``).
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import (elementwise_consumer, indexing_maps, parallel_loops, producer, reassociation, reduced_dims,
                              static_tensor_type)
from .matvec import MARK
from .planner import CONTRACTIONS
from .rows import static_loop_ranges

# What the rebuilt op gets from its own operands; every other attribute is copied.
STRUCTURAL = ("indexing_maps", "iterator_types", "operandSegmentSizes", "dimensions")


def fold_unit_dims(module: ir.Module) -> int:
    """Rebuild the generics and reductions whose innermost loop, or innermost parallel
    loop, has extent 1 over their loops of extent > 1 (see the module docstring);
    returns how many were rebuilt."""
    count = 0
    held = []  # reductions over unit loops only, and the ops reading them: one row group, left whole
    for op in walk_ops(module.operation, {"linalg.generic", "linalg.reduce"}):
        ranges = static_loop_ranges(op)
        if ranges is None or all(r == 1 for r in ranges):
            continue
        if _reduces_units_only(op, ranges) or _reads_any(op, held):
            held.append(op)
            continue
        if not _ends_in_unit(op, ranges) or not rebuildable(op):
            continue
        kept = [d for d, r in enumerate(ranges) if r != 1]
        if op.name == "linalg.generic":
            _fold_generic(op, ranges, kept)
        else:
            _fold_reduce(op, kept)
        count += 1
    return count


def _extents(op, ranges: list, parallel: bool) -> list:
    """The extents of ``op``'s parallel loops (or of its reduction loops), in order."""
    return [r for r, p in zip(ranges, parallel_loops(op) or [True] * len(ranges)) if p == parallel]


def _ends_in_unit(op, ranges: list) -> bool:
    """Whether the innermost loop of ``op``, or its innermost parallel loop (the dims of
    its result: a global pool's ``[N, C, 1, 1]`` over a window), has extent 1. A
    reduction whose parallel loops are all units (a softmax's ``[1, 1000] -> [1]``)
    stays: its result would become a scalar, no longer the shape of its row group."""
    parallel = _extents(op, ranges, parallel=True)
    return ranges[-1] == 1 or (bool(parallel) and parallel[-1] == 1 and any(r > 1 for r in parallel))


def _reduces_units_only(op, ranges: list) -> bool:
    """Whether ``op`` reduces over loops of extent 1 only (a softmax over rows of one
    element): folded, it would reduce over no loop at all; it stays, and so do the ops
    reading it, or its row group would mix folded and unfolded shapes."""
    reductions = _extents(op, ranges, parallel=False)
    return bool(reductions) and all(r == 1 for r in reductions)


def _reads_any(op, ops: list) -> bool:
    """Whether ``op`` reads a result of one of ``ops``."""
    sources = [source for source in map(producer, op.operands) if source is not None]
    return any(source == other for source in sources for other in ops)


def rebuildable(op) -> bool:
    """Whether ``op`` may be rebuilt over other loops: one static result, not a
    matrix-vector partial sum, no ``linalg.index`` in its body, not the epilogue of a
    contraction (its kernel applies it over the contraction's own shape)."""
    if MARK in op.attributes or len(op.results) != 1 or static_tensor_type(op.results[0]) is None:
        return False
    if op.name == "linalg.generic":
        if any(body_op.name == "linalg.index" for body_op in op.regions[0].blocks[0].operations):
            return False
        for value in op.operands:
            source = producer(value)
            if source is None or source.name not in CONTRACTIONS:
                continue
            epilogue = elementwise_consumer(source)
            if epilogue is not None and epilogue == op:
                return False
    return True


def _groups(rank: int, kept: list) -> list:
    """Reassociation of a rank-``rank`` shape onto its ``kept`` dims: each dropped unit
    dim joins the group of the kept dim before it (leading ones the first group)."""
    if not kept:
        return []
    groups = [[] for _ in kept]
    slot = 0
    for d in range(rank):
        if d in kept:
            slot = kept.index(d)
        groups[slot].append(d)
    return groups


def _collapsed(value, kept: list):
    """``value`` collapsed onto its ``kept`` dims (the value itself when it keeps all)."""
    t = static_tensor_type(value)
    if len(kept) == t.rank:
        return value
    shape = [t.shape[d] for d in kept]
    return _mlir.tensor.collapse_shape(ir.RankedTensorType.get(shape, t.element_type), value,
                                      reassociation(_groups(t.rank, kept)))


def _expanded(value, like: ir.RankedTensorType, kept: list):
    if len(kept) == like.rank:
        return value
    return _mlir.tensor.expand_shape(like, value, reassociation(_groups(like.rank, kept)), [], list(like.shape))


def _fold_generic(op, ranges: list, kept: list):
    """``op`` over its loops ``kept``: every unit loop reads index 0, so each operand
    dim of size 1 that then reads the constant 0 is collapsed away."""
    new_dim = {d: i for i, d in enumerate(kept)}
    substitution = ir.AffineMap.get(len(kept), 0, [
        ir.AffineDimExpr.get(new_dim[d]) if d in new_dim else ir.AffineConstantExpr.get(0) for d in range(len(ranges))])
    operands, maps = [], []
    with ir.InsertionPoint(op), op.location:
        for value, amap in zip(op.operands, indexing_maps(op)):
            exprs = [e.compose(substitution) for e in amap.results]
            t = static_tensor_type(value)
            if t is None:  # a scalar operand
                operands.append(value)
                maps.append(ir.AffineMap.get(len(kept), 0, exprs))
                continue
            dims = [i for i, e in enumerate(exprs) if not (t.shape[i] == 1 and _is_zero(e))]
            operands.append(_collapsed(value, dims))
            maps.append(ir.AffineMap.get(len(kept), 0, [exprs[i] for i in dims]))
        parallel = ir.ArrayAttr(op.attributes["iterator_types"])
        iterators = ir.ArrayAttr.get([parallel[d] for d in kept])
        inputs, outputs = operands[:-1], operands[-1:]
        rebuilt = _mlir.linalg.GenericOp([o.type for o in outputs], inputs, outputs,
                                         ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]), iterators)
        adopt_body(op, rebuilt)
        out_type = static_tensor_type(op.results[0])
        out_dims = [i for i, s in enumerate(out_type.shape) if s != 1]
        result = _expanded(rebuilt.results[0], out_type, out_dims)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _fold_reduce(op, kept: list):
    """A ``linalg.reduce`` over its input's dims ``kept``; its init (the input's parallel
    dims) collapsed likewise."""
    reduced = set(reduced_dims(op))
    source, init = op.operands[0], op.operands[1]
    parallel = [d for d in range(static_tensor_type(source).rank) if d not in reduced]
    init_kept = [i for i, d in enumerate(parallel) if d in kept]
    with ir.InsertionPoint(op), op.location:
        new_source, new_init = _collapsed(source, kept), _collapsed(init, init_kept)
        dims = [i for i, d in enumerate(kept) if d in reduced]
        rebuilt = ir.Operation.create("linalg.reduce", results=[new_init.type], operands=[new_source, new_init],
                                      attributes={"dimensions": ir.DenseI64ArrayAttr.get(dims)}, regions=1)
        adopt_body(op, rebuilt)
        result = _expanded(rebuilt.results[0], static_tensor_type(op.results[0]), init_kept)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def adopt_body(op, rebuilt):
    """Move ``op``'s body (its element types are unchanged) and its other attributes to ``rebuilt``."""
    op.regions[0].blocks[0].append_to(rebuilt.regions[0])
    for name in list(op.attributes):
        if name not in STRUCTURAL:
            rebuilt.attributes[name] = op.attributes[name]


def _is_zero(expr) -> bool:
    """Whether ``expr`` is the constant 0 (composed expressions come back untyped)."""
    try:
        return ir.AffineConstantExpr(expr).value == 0
    except ValueError:
        return False


__all__ = ["adopt_body", "fold_unit_dims", "rebuildable"]
