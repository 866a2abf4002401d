"""An op whose result is only read in slices becomes one op per slice.

A merged Q/K/V projection (horizontal fusion's one matmul of three weights) is read by
three transposes, each through its third of the columns. Fused into each transpose's
tiles, the whole matmul would be computed in each, or its slices' offsets would make
every tile compute the columns up to its own. Instead, when every use of a
``linalg.generic``'s result is a static, rank-keeping ``tensor.extract_slice`` along one
of its parallel loop dims (read directly by its output), the op is split: one copy per
slice, its operands sliced along that dim alike (the weight's columns), each slice read
from its own copy. Each copy is then fused into the tiles of its own reader.

An op read whole too (returned) keeps its result for those reads, and its slices get
copies when together they read at most ``1 / RECOMPUTED_PART`` of it: a recurrent
layer's first step reading its three gates from the whole sequence's input projection
(1/16 of it in the GRU) computes them again, from its own inputs, in its own tiles
(one launch, not two: ``phases.py``). Slices that cut one axis alike and another each
its own way (the first step; each gate's columns) get one copy for the common part
first, which the next round splits along the other axis. A slice of a contraction
returned beside the whole (a bidirectional LSTM's projection and its forward half)
gets a copy of the contraction, its bias init copied too, when that copy is small
(``RECOMPUTED_WORK``): copied from the result, the slice would read what other
workgroups compute, a launch of its own. (Its readers cannot take it as a view of the
whole: kernel functions have identity layouts, and the steps reading it are the
kernels the backward steps call with the other half.) Slices are first taken from
the value they view (``_slice_at_source``: a slice of a slice, or of a collapse that
only drops unit dims).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import index_constant
from ..linalg_queries import (indexing_maps, linalg_input_count, parallel_loops, reassociation_groups, static_slice,
                              static_tensor_type)
from .kernels import expr_dims, loop_ranges
from .reshaped_fills import fill_of, own_fill

RECOMPUTED_PART = 8  # slices reading at most 1/8 of a result read whole elsewhere compute it again
# A returned slice of a result also returned whole is computed again by a copy of the op
# when that copy's loops run at most this many iterations: its copy from the result would
# read what other workgroups compute, a launch of its own (``phases.py``).
RECOMPUTED_WORK = 1 << 20


def _slice(value, axis: int, offset: int, size: int):
    t = static_tensor_type(value)
    offsets, sizes = [0] * t.rank, list(t.shape)
    offsets[axis], sizes[axis] = offset, size
    result = ir.RankedTensorType.get(sizes, t.element_type)
    return _mlir.tensor.extract_slice(result, value, [], [], [], offsets, sizes, [1] * t.rank)


def _empty_slice(empty, axis: int, size: int):
    t = static_tensor_type(empty)
    shape = list(t.shape)
    shape[axis] = size
    return _mlir.tensor.empty(shape, t.element_type)


def _static_slice(extract) -> tuple | None:
    """(offsets, sizes) of a static, unit-stride ``tensor.extract_slice``; else None."""
    found = static_slice(extract)
    if found is None or set(found[2]) - {1}:
        return None
    return found[0], found[1]


def _sliced_axis(slices, shape) -> int | None:
    """The one axis the ``slices`` (``_static_slice``) of a result of ``shape`` cut."""
    found = [_static_slice(extract) for extract in slices]
    if None in found:
        return None
    axes = {a for offsets, sizes in found for a in range(len(shape)) if (offsets[a], sizes[a]) != (0, shape[a])}
    return axes.pop() if len(axes) == 1 else None


def _slices_to_split(op) -> list:
    """The slices of ``op``'s result that get a copy of ``op`` each: every use when all
    are slices (one alone: only that part is computed); else, where the other uses read
    it whole (or return a slice of it), the slices read within the kernel when together
    they read at most ``1 / RECOMPUTED_PART`` of it (a recurrent layer's first step
    reading its gates from the whole sequence's input projection, which the kernel
    returns): computing that part again costs less than the launch that reading it from
    the whole would take (``phases.py``). Before those, a small returned slice of a
    contraction, alone (``RECOMPUTED_WORK``)."""
    uses = [use.owner.operation for use in op.results[0].uses]
    slices = [u for u in uses if u.name == "tensor.extract_slice"]
    if len(slices) == len(uses):
        return slices
    returned = [u for u in slices if any(use.owner.name == "func.return" for use in u.results[0].uses)]
    out = static_tensor_type(op.results[0])
    if out is None:
        return []
    contraction = not all(parallel_loops(op) or [True])
    ranges = loop_ranges(op)  # the copy's work is its loops' iterations (its multiply-adds)
    for extract in returned if contraction and ranges is not None else []:  # one at a time: others may cut other axes
        axis = _sliced_axis([extract], out.shape)
        part = math.prod(static_tensor_type(extract.results[0]).shape)
        if axis is not None and _split_dim(op, axis) is not None and \
                math.prod(ranges) * part <= RECOMPUTED_WORK * math.prod(out.shape):
            return [extract]
    slices = [u for u in slices if u not in returned]
    read = sum(math.prod(static_tensor_type(u.results[0]).shape) for u in slices)
    return slices if slices and RECOMPUTED_PART * read <= math.prod(out.shape) else []


def _common_cut(slices, shape) -> int | None:
    """An axis that all ``slices`` (``_static_slice``) cut alike, short of the whole (a
    recurrent layer's first step, whose gates are slices along another axis too)."""
    found = [_static_slice(extract) for extract in slices]
    if None in found:
        return None
    return next((a for a in range(len(shape)) if len({(o[a], z[a]) for o, z in found}) == 1 and
                 (found[0][0][a], found[0][1][a]) != (0, shape[a])), None)


def _split_dim(op, axis: int) -> int | None:
    """The loop dim of ``op`` that its result's ``axis`` is, when ``op`` can be split along
    it: a parallel dim that every operand indexes directly."""
    maps = indexing_maps(op)
    output_expr = maps[-1].results[axis]
    if not isinstance(output_expr, ir.AffineDimExpr):
        return None
    dim = ir.AffineDimExpr(output_expr).position
    if not parallel_loops(op)[dim]:
        return None
    for amap in maps:  # every operand using the dim must index it directly
        if any(not isinstance(e, ir.AffineDimExpr) and dim in expr_dims(e) for e in amap.results):
            return None
    return dim


def _elementwise(value) -> bool:
    """Whether ``value`` is the result of a ``linalg.generic`` with only parallel loops."""
    return isinstance(value, ir.OpResult) and value.owner.name == "linalg.generic" and \
        len(value.owner.results) == 1 and all(parallel_loops(value.owner) or [False])


def _copy(op, dim: int, offset: int, size: int, result_type, own_init: bool = False):
    """A copy of ``op`` (at the insertion point) computing ``size`` of its loop ``dim`` from
    ``offset``: its operands sliced alike, its result of ``result_type``. With
    ``own_init``, an init computed element-wise (a bias broadcast) gets its own copy
    too: a returned copy is a root of its own, and a slice of an init that another root
    writes in place would be copied by bufferization, outside the launch."""
    operands = []
    for index, (value, amap) in enumerate(zip(op.operands, indexing_maps(op))):
        positions = [i for i, e in enumerate(amap.results)
                     if isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == dim]
        if not (positions and isinstance(value.type, ir.RankedTensorType)):
            operands.append(value)
        elif isinstance(value, ir.OpResult) and value.owner.operation.name == "tensor.empty":
            operands.append(_empty_slice(value, positions[0], size))  # its own, not a view
        elif own_init and index >= linalg_input_count(op) and _elementwise(value) and \
                _split_dim(value.owner, positions[0]) is not None:
            t = static_tensor_type(value)
            shape = list(t.shape)
            shape[positions[0]] = size
            operands.append(_copy(value.owner, _split_dim(value.owner, positions[0]), offset, size,
                                  ir.RankedTensorType.get(shape, t.element_type), own_init))
        elif fill_of(value) is not None:  # an accumulator's fill: its own too (``reshaped_fills``)
            t = static_tensor_type(value)
            shape = list(t.shape)
            shape[positions[0]] = size
            part = ir.RankedTensorType.get(shape, t.element_type)
            operands.append(own_fill(fill_of(value), part, ir.InsertionPoint.current))
        else:
            operands.append(_slice(value, positions[0], offset, size))
    clone = op.clone()
    for index, value in enumerate(operands):
        clone.operands[index] = value
    clone.results[0].set_type(result_type)
    _offset_indices(clone, dim, offset)
    return clone.results[0]


def _offset_indices(op, dim: int, offset: int) -> None:
    """``op``'s reads of its loop ``dim``'s index (``linalg.index``: a gather's
    coordinates, a padded input read in bounds) moved by ``offset``: a copy computing
    part of the loop from ``offset`` must read what the original did there."""
    if not offset:
        return
    for inner in list(op.regions[0].blocks[0].operations):
        if inner.operation.name != "linalg.index" or ir.IntegerAttr(inner.attributes["dim"]).value != dim:
            continue
        with ir.InsertionPoint(inner), inner.location:
            moved = inner.operation.clone()
            shifted = _mlir.arith.addi(moved.results[0], index_constant(offset))
        inner.results[0].replace_all_uses_with(shifted)
        inner.operation.erase()


def _split(op) -> bool:
    result = op.results[0]
    uses = _slices_to_split(op)
    out = static_tensor_type(result)
    if not uses or out is None:
        return False
    axis = _sliced_axis(uses, out.shape)
    common = _common_cut(uses, out.shape) if axis is None else None
    cut = common if axis is None else axis
    dim = _split_dim(op, cut) if cut is not None else None
    if dim is None:
        return False
    if common is not None:  # one copy for the part every slice reads, sliced as the original was
        offsets, sizes = _static_slice(uses[0])
        shape = list(out.shape)
        shape[common] = sizes[common]
        with ir.InsertionPoint(op), op.location:
            part = _copy(op, dim, offsets[common], sizes[common], ir.RankedTensorType.get(shape, out.element_type))
        for extract in uses:
            offsets, sizes = _static_slice(extract)
            offsets[common] = 0
            with ir.InsertionPoint(extract), extract.location:
                view = _mlir.tensor.extract_slice(extract.results[0].type, part, [], [], [], offsets, sizes,
                                                  [1] * len(sizes))
            extract.results[0].replace_all_uses_with(view)
            extract.erase()
    for extract in uses if common is None else []:
        offsets, sizes = _static_slice(extract)
        returned = any(use.owner.name == "func.return" for use in extract.results[0].uses)
        with ir.InsertionPoint(extract), extract.location:
            extract.results[0].replace_all_uses_with(_copy(op, dim, offsets[axis], sizes[axis],
                                                           extract.results[0].type, own_init=returned))
        extract.erase()
    if not list(result.uses):
        op.erase()
    return True


def _slice_at_source(extract) -> bool:
    """Take ``extract`` (``_static_slice``) from the value its source views: a slice of a
    slice is one slice, a slice of a collapse that only drops unit dims is the collapse
    of a slice (a recurrent step's gates: a slice of a slice of the step's row of the
    projection), so that ``_split`` sees every slice of the op itself."""
    found = _static_slice(extract)
    source = extract.operands[0].owner if isinstance(extract.operands[0], ir.OpResult) else None
    if found is None or source is None or len(found[1]) != static_tensor_type(extract.results[0]).rank:
        return False  # a slice dropping dims is left as it is
    offsets, sizes = found
    if source.name == "tensor.extract_slice" and _static_slice(source) is not None and \
            len(_static_slice(source)[1]) == static_tensor_type(source.results[0]).rank:
        outer = _static_slice(source)[0]
        with ir.InsertionPoint(extract), extract.location:
            merged = _mlir.tensor.extract_slice(extract.results[0].type, source.operands[0], [], [], [],
                                                [a + b for a, b in zip(outer, offsets)], sizes, [1] * len(sizes))
    elif source.name == "tensor.collapse_shape":
        shape = static_tensor_type(source.operands[0]).shape
        groups = reassociation_groups(source)
        if any(sum(1 for d in group if shape[d] != 1) > 1 for group in groups):
            return False
        wide_offsets, wide_sizes = [0] * len(shape), [1] * len(shape)
        for group, offset, size in zip(groups, offsets, sizes):
            kept = next((d for d in group if shape[d] != 1), group[-1])
            wide_offsets[kept], wide_sizes[kept] = offset, size
        element = static_tensor_type(extract.results[0]).element_type
        with ir.InsertionPoint(extract), extract.location:
            wide = _mlir.tensor.extract_slice(ir.RankedTensorType.get(wide_sizes, element), source.operands[0], [], [],
                                              [], wide_offsets, wide_sizes, [1] * len(shape))
            merged = source.clone()
        merged.operands[0] = wide
        merged.results[0].set_type(extract.results[0].type)
        merged = merged.results[0]
    else:
        return False
    extract.results[0].replace_all_uses_with(merged)
    extract.erase()
    while source is not None and source.name in ("tensor.extract_slice", "tensor.collapse_shape") and \
            not list(source.results[0].uses):  # views left unread would count as reads of the op
        above = source.operands[0].owner if isinstance(source.operands[0], ir.OpResult) else None
        source.erase()
        source = above
    return True


def split_sliced_ops(module: ir.Module) -> int:
    """Split every ``linalg.generic`` only read in slices along one parallel dim (see the
    module docstring), slices first taken from the values they view
    (``_slice_at_source``); returns how many."""
    split = 0
    while True:  # a split reads its producers in slices in turn (a matmul's fill)
        while sum(_slice_at_source(op) for op in walk_ops(module.operation, {"tensor.extract_slice"})):
            pass
        done = sum(_split(op) for op in walk_ops(module.operation, {"linalg.generic"}) if len(op.results) == 1)
        if not done:
            return split
        split += done


__all__ = ["split_sliced_ops"]
