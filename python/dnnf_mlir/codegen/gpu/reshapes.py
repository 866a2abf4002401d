"""Reshapes and slices inside a GPU kernel folded into the indexing maps of the ops that
read them.

Fusion cannot tile through ``tensor.expand_shape`` / ``collapse_shape``: a kernel whose
softmax result is reshaped before its division would compute the softmax in a buffer
of its own, outside the dispatch's loops. A reshape of a value computed in the kernel
(or of an argument, adding or dropping unit dims only) is instead read through it: its
consumer reads the source with the reshape composed into its indexing map.

* ``expand_shape``: the source index of a group is the expanded indices linearized,
  ``i_0 * s_1 * ... + ... + i_k`` (heads split from a projection: ``h * 64 + d``);
* ``collapse_shape`` of groups with at most one dim above 1 (unit dims dropped):
  the collapsed index, at the dim above 1, 0 elsewhere.

* ``extract_slice`` (static, keeping the rank): ``offset + stride * i`` (a merged
  projection's Q, K and V columns).

Other collapses (which would need ``floordiv``/``mod`` maps) are left alone.
"""

from __future__ import annotations

from ..._mlir import ir
from ..linalg_queries import indexing_maps, reassociation_groups, static_tensor_type
from ..lowered_module import walk_ops

VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice")


def _source_exprs(reshape, results) -> list | None:
    """The source indices of a reshape as affine expressions of the result indices
    ``results`` (expressions); None when not expressible without floordiv / mod."""
    groups = reassociation_groups(reshape)
    source = static_tensor_type(reshape.operands[0]).shape
    result = static_tensor_type(reshape.results[0]).shape
    exprs = []
    if reshape.name == "tensor.expand_shape":
        for group in groups:
            total = None
            for dim in group:
                term = results[dim]
                total = term if total is None else total * result[dim] + term
            exprs.append(total)
        return exprs
    # collapse_shape: the result has one dim per group
    for position, group in enumerate(groups):
        big = [dim for dim in group if source[dim] != 1]
        if len(big) > 1:
            return None
        for dim in group:
            exprs.append(results[position] if dim in big or (not big and dim == group[-1]) else ir.AffineConstantExpr.get(0))
    return exprs


def _slice_exprs(extract, results) -> list | None:
    """The source indices of a static, rank-keeping ``tensor.extract_slice``:
    ``offset + stride * i``."""
    offsets = list(ir.DenseI64ArrayAttr(extract.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(extract.attributes["static_strides"]))
    dynamic = ir.ShapedType.get_dynamic_size()
    if len(extract.operands) != 1 or len(offsets) != len(results) or dynamic in offsets + strides:
        return None
    return [e * stride + offset if (stride, offset) != (1, 0) else e
            for e, offset, stride in zip(results, offsets, strides)]


def _unit_dims_only(reshape) -> bool:
    """Whether a reshape only adds or drops unit dims (each group one dim above 1 at most)."""
    if reshape.name not in ("tensor.expand_shape", "tensor.collapse_shape"):
        return False
    wide = reshape.operands[0] if reshape.name == "tensor.collapse_shape" else reshape.results[0]
    shape = static_tensor_type(wide).shape
    return all(sum(1 for dim in group if shape[dim] != 1) <= 1 for group in reassociation_groups(reshape))


def _view_chain(value):
    """(the value ``value`` views, the views from it to ``value``, innermost first); None
    when ``value`` is not a view of a computed value, or of an argument through reshapes
    that only add or drop unit dims (a bias broadcast to ``C x 1 x 1``, whose map's
    constant 0s would stop the element-wise fusion from moving a reshape past it)."""
    chain = []
    while isinstance(value, ir.OpResult) and value.owner.operation.name in VIEWS:
        chain.append(value.owner.operation)
        value = value.owner.operation.operands[0]
    if not chain:
        return None
    computed = isinstance(value, ir.OpResult) and value.owner.operation.name.startswith("linalg.")
    if not computed and not (isinstance(value, ir.BlockArgument) and all(_unit_dims_only(v) for v in chain)):
        return None
    return value, chain


def _fold_into(consumer, operand_index: int, source, chain) -> bool:
    maps = indexing_maps(consumer)
    amap = maps[operand_index]
    exprs = list(amap.results)
    for view in chain:  # from the consumer's view back to the source
        if any(static_tensor_type(v) is None for v in (view.operands[0], view.results[0])):
            return False
        exprs = _slice_exprs(view, exprs) if view.name == "tensor.extract_slice" else _source_exprs(view, exprs)
        if exprs is None:
            return False
    maps[operand_index] = ir.AffineMap.get(amap.n_dims, amap.n_symbols, exprs)
    consumer.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    consumer.operands[operand_index] = source
    return True


def reshapes_into_consumers(module: ir.Module) -> int:
    """Fold every chain of reshapes and slices of a value computed in the kernel into the
    ``linalg.generic`` inputs that read it; returns how many reads were rewritten."""
    folded = 0
    for consumer in walk_ops(module.operation, {"linalg.generic"}):
        inputs = len(consumer.operands) - len(consumer.results)
        for index in range(inputs):
            found = _view_chain(consumer.operands[index])
            if found is not None:
                folded += _fold_into(consumer, index, *found)
    for view in reversed(walk_ops(module.operation, set(VIEWS))):
        if not list(view.results[0].uses):
            view.erase()
    return folded


__all__ = ["reshapes_into_consumers"]
