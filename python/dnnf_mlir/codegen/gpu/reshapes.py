"""Reshapes inside a GPU kernel folded into the indexing maps of the ops that read them.

Fusion cannot tile through ``tensor.expand_shape`` / ``collapse_shape``: a kernel whose
softmax result is reshaped before its division would compute the softmax in a buffer
of its own, outside the dispatch's loops. A reshape of a value computed in the kernel
is instead read through it: its consumer reads the source with the reshape composed
into its indexing map.

* ``expand_shape``: the source index of a group is the expanded indices linearized,
  ``i_0 * s_1 * ... + ... + i_k`` (heads split from a projection: ``h * 64 + d``);
* ``collapse_shape`` of groups with at most one dim above 1 (unit dims dropped):
  the collapsed index, at the dim above 1, 0 elsewhere.

Other collapses (which would need ``floordiv``/``mod`` maps) are left alone.
"""

from __future__ import annotations

from ..._mlir import ir
from ..linalg_queries import indexing_maps, reassociation_groups, static_tensor_type
from ..lowered_module import walk_ops


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


def _fold_into(consumer, operand_index: int, reshape) -> bool:
    maps = indexing_maps(consumer)
    amap = maps[operand_index]
    exprs = _source_exprs(reshape, list(amap.results))
    if exprs is None:
        return False
    maps[operand_index] = ir.AffineMap.get(amap.n_dims, amap.n_symbols, exprs)
    consumer.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    consumer.operands[operand_index] = reshape.operands[0]
    return True


def reshapes_into_consumers(module: ir.Module) -> int:
    """Fold every reshape of a value computed in the kernel into the ``linalg.generic``
    inputs that read it; returns how many reads were rewritten."""
    folded = 0
    for reshape in walk_ops(module.operation, {"tensor.expand_shape", "tensor.collapse_shape"}):
        source = reshape.operands[0]
        if not isinstance(source, ir.OpResult) or not source.owner.name.startswith("linalg."):
            continue
        if static_tensor_type(source) is None or static_tensor_type(reshape.results[0]) is None:
            continue
        for use in list(reshape.results[0].uses):
            consumer = use.owner
            inputs = len(consumer.operands) - len(consumer.results)
            if consumer.name == "linalg.generic" and use.operand_number < inputs:
                folded += _fold_into(consumer, use.operand_number, reshape)
        if not list(reshape.results[0].uses):
            reshape.erase()
    return folded


__all__ = ["reshapes_into_consumers"]
