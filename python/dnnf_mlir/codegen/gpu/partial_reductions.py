"""Long reductions of few results in two launches: partial results, then their combination.

A reduction to a scalar or to a few results (ReduceSum over every axis of a large
tensor, [2, 100000] over its last axis) has too few results to tile over workgroups;
split over one workgroup's threads (``long_reductions``) it still runs on one compute
unit. Here such a reduction ``R`` becomes two ops before scheduling:

- ``P``: its innermost reduction loop, of n iterations, read as ``j * C + c`` with C a
  divisor of n (at most ``MAX_PARTS``), ``c`` a parallel loop and ``j`` a reduction:
  C partial results per result of ``R``, each of every C-th element (so the threads of
  a workgroup, taking consecutive ``c``, read consecutive elements), from the
  combiner's neutral element (0 for a sum, -inf for a maximum);
- ``R'``: the partials combined onto ``R``'s own init with ``R``'s combining op, so a
  mean still divides by the full count (its division reads ``R'``) and a maximum
  propagates NaN as ``R`` did.

``P`` is marked ``PARTIAL_ATTR``: the kernel is compiled phased (``phases.py``), ``P``
a launch of its own over many workgroups, then ``R'`` and what reads it. A reduction
whose body is not one combining op of its accumulator stays as it is, and so does one
whose loop has no divisor between ``MIN_PARTS`` and ``MAX_PARTS`` (a prime length)
while a workgroup's threads (``long_reductions``) can reduce it within the device's
loop budget (measured faster on lavapipe: [2, 100003]'s maximum in 0.21 ms against
0.31). Past that budget (lavapipe's 65535 iterations a thread; 8388617 elements: 128
threads of 65537 iterations each, refused) it is cut into ``MAX_PARTS`` parts of
``floor(n / MAX_PARTS)`` (``P`` over a view of the first elements), and the tail of fewer
than ``MAX_PARTS`` elements reduced by a third op, ``R`` over a view of the tail, onto
``R'``. A device with no budget (PoCL) keeps such a reduction in one workgroup: cut, the
8388617-element sum took 2-4x as long there.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import arith, ir
from ...ir_walk import walk_ops
from ...conversion.ecg_to_linalg.builders import extract_slice
from ...linalg_builders import generic, with_operands
from ..linalg_queries import (indexing_maps, linalg_init, linalg_input_count, parallel_loops, reassociation,
                              static_tensor_type)
from .kernels import expr_dims, loop_ranges
from .long_reductions import FEW_RESULTS, SPLIT_THREADS
from .tilings import divisor

PARTIAL_ATTR = "dnnf.gpu.partial_reduction"
MIN_ELEMENTS = 32768  # the fewest elements per result worth a launch more (fewer: ``long_reductions``)
MIN_PARTS, MAX_PARTS = 64, 1024  # partial results per result

# The combining ops split, with their neutral elements.
_NEUTRAL = {"arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -math.inf, "arith.minimumf": math.inf,
            "arith.maxnumf": -math.inf, "arith.minnumf": math.inf}


def _combiner(op):
    """The op of ``op``'s body combining its accumulator with the value of an element
    (one of ``_NEUTRAL``, the accumulator's only reader, yielded), else None."""
    block = op.regions[0].blocks[0]
    accumulator = block.arguments[len(block.arguments) - 1]
    uses = list(accumulator.uses)
    yielded = list(block.operations)[-1].operands
    if len(uses) != 1 or len(yielded) != 1:
        return None
    combiner = uses[0].owner
    if combiner.name not in _NEUTRAL or not isinstance(yielded[0], ir.OpResult) or yielded[0].owner != combiner:
        return None
    return combiner


def _split_loop(op) -> int:
    """The loop of ``op`` split: its innermost reduction."""
    return max(i for i, p in enumerate(parallel_loops(op)) if not p)


def _read_plainly(op, loop: int) -> bool:
    """Whether every input of ``op`` reads ``loop`` as a dim of its own (``d``, not in an
    expression), so that the input can be expanded along it."""
    for amap in indexing_maps(op)[:linalg_input_count(op)]:
        for expr in amap.results:
            if loop in expr_dims(expr) and not (isinstance(expr, ir.AffineDimExpr)
                                                and expr.position == loop):
                return False
    return True


def _parts(op, max_loop_iterations: int | None) -> int | None:
    """C for the reduction ``op`` (see the module docstring) on a device whose threads loop
    at most ``max_loop_iterations`` times (None: no budget), or None when it is not split."""
    parallel = parallel_loops(op) if op.name == "linalg.generic" and len(op.results) == 1 else None
    if not parallel or all(parallel):
        return None
    result, ranges, loop = static_tensor_type(op.results[0]), loop_ranges(op), _split_loop(op)
    if (result is None or ranges is None or not isinstance(result.element_type, ir.FloatType)
            or math.prod(result.shape) > FEW_RESULTS or _combiner(op) is None
            or any(inner.name == "linalg.index" for inner in op.regions[0].blocks[0].operations)
            or not _read_plainly(op, loop)):
        return None
    if math.prod(ranges[d] for d, p in enumerate(parallel) if not p) < MIN_ELEMENTS:
        return None
    parts = divisor(ranges[loop], MAX_PARTS)
    if parts >= MIN_PARTS:
        return parts
    if max_loop_iterations is None:
        return None
    per_thread = -(-math.prod(ranges[d] for d, p in enumerate(parallel) if not p) // SPLIT_THREADS)
    return MAX_PARTS if per_thread > max_loop_iterations else None


def _sliced(value, amap, loop: int, begin: int, end: int):
    """``value`` (an input read through ``amap``) from ``begin`` to ``end`` along the dim
    that ``loop`` reads (a view)."""
    shape = static_tensor_type(value).shape
    read = [isinstance(e, ir.AffineDimExpr) and e.position == loop for e in amap.results]
    if not any(read) or (begin, end) == (0, shape[read.index(True)]):
        return value
    offsets = [begin if r else 0 for r in read]
    sizes = [end - begin if r else n for n, r in zip(shape, read)]
    return extract_slice(value, offsets, sizes)


def _expanded(value, amap, loop: int, parts: int, loops: int):
    """``value`` (an input read through ``amap``) with its dim read by ``loop`` expanded
    into (n / parts, parts), and its map reading the new loop ``loops`` and ``loop``."""
    shape, dims, exprs, groups = static_tensor_type(value).shape, [], [], []
    for position, expr in enumerate(amap.results):
        if isinstance(expr, ir.AffineDimExpr) and expr.position == loop:
            groups.append([len(dims), len(dims) + 1])
            dims += [shape[position] // parts, parts]
            exprs += [ir.AffineDimExpr.get(loops), expr]
        else:
            groups.append([len(dims)])
            dims.append(shape[position])
            exprs.append(expr)
    new_map = ir.AffineMap.get(loops + 1, 0, exprs)
    if len(dims) == len(shape):
        return value, new_map
    element = ir.RankedTensorType(value.type).element_type
    return _mlir.tensor.expand_shape(ir.RankedTensorType.get(dims, element), value, reassociation(groups), [], dims), \
        new_map


def _split(op, parts: int):
    """``op`` as ``P`` then ``R'`` (the module docstring), in its place."""
    maps, inputs, parallel = indexing_maps(op), linalg_input_count(op), parallel_loops(op)
    loops, d = len(parallel), _split_loop(op)
    result = static_tensor_type(op.results[0])
    rank, element = result.rank, result.element_type
    combiner, accumulator_arg = _combiner(op), op.regions[0].blocks[0].arguments[-1]
    length = loop_ranges(op)[d]
    whole = length - length % parts  # the elements in parts; the tail's after them
    with ir.InsertionPoint(op), op.location:
        expanded = [_expanded(_sliced(value, amap, d, 0, whole), amap, d, parts, loops)
                    for value, amap in zip(op.operands[:inputs], maps)]
        out = ir.AffineMap.get(loops + 1, 0, list(maps[-1].results) + [ir.AffineDimExpr.get(d)])
        empty = _mlir.tensor.empty(list(result.shape) + [parts], element)
        neutral = arith.constant(element, _NEUTRAL[combiner.name])
        filled = generic([], [ir.AffineMap.get_identity(rank + 1)], [empty], lambda _out: neutral)[0]
        iterators = ["parallel" if p or i == d else "reduction" for i, p in enumerate(parallel)] + ["reduction"]
        (partials,) = with_operands(op, [v for v, _ in expanded], [m for _, m in expanded] + [out], [filled], iterators)
        partials.owner.attributes[PARTIAL_ATTR] = ir.UnitAttr.get()

        def combine(part, accumulator):
            clone = combiner.clone(ip=ir.InsertionPoint.current)
            for number, operand in enumerate(combiner.operands):
                clone.operands[number] = accumulator if operand == accumulator_arg else part
            return clone.results[0]

        onto = [ir.AffineMap.get_identity(rank + 1), ir.AffineMap.get(rank + 1, 0, [ir.AffineDimExpr.get(i)
                                                                                     for i in range(rank)])]
        (combined,) = generic([partials], onto, [linalg_init(op)], combine, ["parallel"] * rank + ["reduction"])
        if whole < length:  # the tail reduced onto the partials' combination
            tail = [_sliced(value, amap, d, whole, length) for value, amap in zip(op.operands[:inputs], maps)]
            (combined,) = with_operands(op, tail, maps, [combined])
    op.results[0].replace_all_uses_with(combined)
    op.erase()


def split_partial_reductions(module: ir.Module, max_loop_iterations: int | None = None) -> int:
    """Split every long reduction of few results of ``module`` (the module docstring) for a
    device whose threads loop at most ``max_loop_iterations`` times (None: no budget);
    returns how many."""
    chosen = [(op, _parts(op, max_loop_iterations)) for op in walk_ops(module.operation, {"linalg.generic"})]
    chosen = [(op, parts) for op, parts in chosen if parts is not None]
    for op, parts in chosen:
        _split(op, parts)
    return len(chosen)


def partial_reductions(function) -> list:
    """The ``P`` ops of ``function`` (marked ``PARTIAL_ATTR``), in program order."""
    return [op for op in walk_ops(function, {"linalg.generic"}) if PARTIAL_ATTR in op.attributes]


__all__ = ["PARTIAL_ATTR", "partial_reductions", "split_partial_reductions"]
