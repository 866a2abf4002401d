"""An op whose result is only read in slices becomes one op per slice.

A merged Q/K/V projection (horizontal fusion's one matmul of three weights) is read by
three transposes, each through its third of the columns. Fused into each transpose's
tiles, the whole matmul would be computed in each, or its slices' offsets would make
every tile compute the columns up to its own. Instead, when every use of a
``linalg.generic``'s result is a static, rank-keeping ``tensor.extract_slice`` along one
of its parallel loop dims (read directly by its output), the op is split: one copy per
slice, its operands sliced along that dim alike (the weight's columns), each slice read
from its own copy. Each copy is then fused into the tiles of its own reader.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import indexing_maps, parallel_loops, static_tensor_type
from .kernels import expr_dims


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


def _sliced_axis(slices, shape) -> int | None:
    """The one axis the static, unit-stride ``slices`` of a result of ``shape`` cut."""
    axes = set()
    dynamic = ir.ShapedType.get_dynamic_size()
    for extract in slices:
        offsets = list(ir.DenseI64ArrayAttr(extract.attributes["static_offsets"]))
        sizes = list(ir.DenseI64ArrayAttr(extract.attributes["static_sizes"]))
        strides = list(ir.DenseI64ArrayAttr(extract.attributes["static_strides"]))
        if len(extract.operands) != 1 or len(sizes) != len(shape) or dynamic in offsets + sizes or set(strides) != {1}:
            return None
        axes.update(a for a in range(len(shape)) if (offsets[a], sizes[a]) != (0, shape[a]))
    return axes.pop() if len(axes) == 1 else None


def _split(op) -> bool:
    result = op.results[0]
    uses = [use.owner.operation for use in result.uses]
    if len(uses) < 2 or any(u.name != "tensor.extract_slice" for u in uses):
        return False
    out = static_tensor_type(result)
    axis = _sliced_axis(uses, out.shape) if out is not None else None
    if axis is None:
        return False
    maps = indexing_maps(op)
    output_expr = maps[-1].results[axis]
    if not isinstance(output_expr, ir.AffineDimExpr):
        return False
    dim = ir.AffineDimExpr(output_expr).position
    if not parallel_loops(op)[dim]:
        return False
    for amap in maps:  # every operand using the dim must index it directly
        if any(not isinstance(e, ir.AffineDimExpr) and dim in expr_dims(e) for e in amap.results):
            return False
    for extract in uses:
        offset = list(ir.DenseI64ArrayAttr(extract.attributes["static_offsets"]))[axis]
        size = list(ir.DenseI64ArrayAttr(extract.attributes["static_sizes"]))[axis]
        with ir.InsertionPoint(extract), extract.location:
            operands = []
            for value, amap in zip(op.operands, maps):
                positions = [i for i, e in enumerate(amap.results)
                             if isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == dim]
                if not (positions and isinstance(value.type, ir.RankedTensorType)):
                    operands.append(value)
                elif isinstance(value, ir.OpResult) and value.owner.operation.name == "tensor.empty":
                    operands.append(_empty_slice(value, positions[0], size))  # its own, not a view
                else:
                    operands.append(_slice(value, positions[0], offset, size))
            clone = op.clone()
            for index, value in enumerate(operands):
                clone.operands[index] = value
            clone.results[0].set_type(extract.results[0].type)
        extract.results[0].replace_all_uses_with(clone.results[0])
        extract.erase()
    op.erase()
    return True


def split_sliced_ops(module: ir.Module) -> int:
    """Split every ``linalg.generic`` only read in slices along one parallel dim (see the
    module docstring); returns how many."""
    split = 0
    while True:  # a split reads its producers in slices in turn (a matmul's fill)
        done = sum(_split(op) for op in walk_ops(module.operation, {"linalg.generic"}) if len(op.results) == 1)
        if not done:
            return split
        split += done


__all__ = ["split_sliced_ops"]
