"""Ops of a scalar result computed as one element of a one-dimensional tensor.

A GPU kernel's roots are tiled over workgroups along their result's dims; an op with a
0-d result (a reduction of a whole tensor: ``ReduceL1`` of a vector, ``ReduceSum`` over
every axis, the fill of its accumulator) has none, so its ``scf.forall`` has no dim and
the schedule has no loop to map (``tile_using_forall`` with no tile sizes is rejected):
no schedule applied. Each such ``linalg.generic`` gets a parallel loop of one
iteration in front of its loops and a result of one element, which the other ops it
widens read through that loop, every other generic as element 0, and what else reads
it (the kernel's return) collapsed back to 0-d: no 0-d reshape between two generics,
which the later rewrites of reshapes do not take.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import with_operands
from ..linalg_queries import indexing_maps, linalg_input_count, parallel_loops, static_tensor_type


def _scalar_result(op) -> bool:
    """Whether ``op`` is a ``linalg.generic`` of one 0-d tensor result, with no
    ``linalg.index`` (whose dims the new loop would move)."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    result = static_tensor_type(op.results[0])
    return result is not None and result.rank == 0 and \
        not any(inner.name == "linalg.index" for inner in op.regions[0].blocks[0].operations)


def _one_element(value, widened: dict):
    """``value`` (a 0-d tensor) as one element: the widened op's result, else a new
    empty tensor for an empty init, else ``value`` expanded."""
    if value in widened:
        return widened[value]
    element = ir.RankedTensorType(value.type).element_type
    if isinstance(value, ir.OpResult) and value.owner.name == "tensor.empty":
        return _mlir.tensor.empty([1], element)
    return _mlir.tensor.expand_shape(ir.RankedTensorType.get([1], element), value, ir.ArrayAttr.get([]), [], [1])


def _widen(op, widened: dict):
    """``op`` over a leading loop of one iteration, its result of one element (a new op
    in its place, recorded in ``widened``)."""
    maps, inputs = indexing_maps(op), linalg_input_count(op)
    loops = maps[0].n_dims
    shifted = ir.AffineMap.get(loops + 1, 0, [ir.AffineDimExpr.get(d + 1) for d in range(loops)])
    first = ir.AffineMap.get(loops + 1, 0, [ir.AffineDimExpr.get(0)])
    operands, new_maps = [], []
    with ir.InsertionPoint(op), op.location:
        for number, (value, amap) in enumerate(zip(op.operands, maps)):
            if number >= inputs or value in widened:
                operands.append(_one_element(value, widened))
                new_maps.append(first)
            else:
                operands.append(value)
                new_maps.append(ir.AffineMap.get(loops + 1, 0, [e.compose(shifted) for e in amap.results]))
        iterators = ["parallel"] + ["parallel" if p else "reduction" for p in parallel_loops(op)]
        (result,) = with_operands(op, operands[:inputs], new_maps, operands[inputs:], iterators)
    widened[op.results[0]] = result
    return result


def _read_first(reader, number: int, value):
    """Make the generic ``reader`` read ``value`` (one element) as its input ``number``,
    which was a 0-d tensor: element 0 at every iteration."""
    maps = indexing_maps(reader)
    maps[number] = ir.AffineMap.get(maps[number].n_dims, 0, [ir.AffineConstantExpr.get(0)])
    reader.operands[number] = value
    reader.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def widen_scalar_results(module: ir.Module) -> int:
    """Compute every 0-d result of ``module``'s generics as one element (see the module
    docstring); returns how many ops changed."""
    widened = {}
    ops = [op for op in walk_ops(module.operation, {"linalg.generic"}) if _scalar_result(op)]
    for op in ops:
        _widen(op, widened)
    for op in ops:
        old, new = op.results[0], widened[op.results[0]]
        for use in list(old.uses):
            if use.owner.name == "linalg.generic" and use.operand_number < linalg_input_count(use.owner):
                _read_first(use.owner, use.operand_number, new)
        if list(old.uses):
            with ir.InsertionPoint(op), op.location:
                scalar = _mlir.tensor.collapse_shape(old.type, new, ir.ArrayAttr.get([]))
            old.replace_all_uses_with(scalar)
    for op in reversed(ops):
        op.erase()
    return len(ops)


__all__ = ["widen_scalar_results"]
