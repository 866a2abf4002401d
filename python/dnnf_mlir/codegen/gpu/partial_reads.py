"""Reads of the leading part of a value the kernel computes, along a loop dim.

A slice at offset 0 that is shorter than its source (a rotation copying the first
half of each row behind the negated second half) cannot be folded into its
reader's indexing map as the loop dim alone: linalg infers a loop's range from every
operand that a dim indexes alone, and the source's extent would contradict the
reader's. Read as ``d mod extent`` instead (the identity, since ``d`` stays below the
slice's size), the reader fuses with the op computing the value, whose tiles are then
exactly the reader's (``reads_leading_part``). Once the schedules have tiled the
reader, each such ``mod`` is the loop dim again (``drop_bounded_mods``), so that the
thread's row vectorizes. (``reshapes`` leaves a value computed from a contraction
alone: each reader's tiles would compute the contraction again.)
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import indexing_maps, static_tensor_type
from .kernels import loop_ranges


def reads_leading_part(dim_expr, extent: int):
    """The index of a read of a source of ``extent`` along ``dim_expr`` (a loop dim that
    stays below ``extent``) that linalg does not take for the loop's range."""
    return dim_expr % extent


def _bounded_dim(expr, ranges: list) -> int | None:
    """The loop dim of ``expr`` when it is ``d mod n`` with ``d`` below ``n`` over ``ranges``."""
    if not isinstance(expr, ir.AffineModExpr):
        return None
    mod = ir.AffineModExpr(expr)
    if not (isinstance(mod.lhs, ir.AffineDimExpr) and isinstance(mod.rhs, ir.AffineConstantExpr)):
        return None
    dim = ir.AffineDimExpr(mod.lhs).position
    return dim if ranges[dim] <= ir.AffineConstantExpr(mod.rhs).value else None


def drop_bounded_mods(module: ir.Module) -> int:
    """In every ``linalg.generic`` of ``module``, an operand's ``d mod n`` whose ``d``
    stays below ``n`` and spans the operand's dim -> ``d``; returns how many."""
    dropped = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        ranges = loop_ranges(op)
        if ranges is None:
            continue
        maps, changed = indexing_maps(op), False
        for index, (value, amap) in enumerate(zip(op.operands, maps)):
            shape = static_tensor_type(value).shape if static_tensor_type(value) is not None else None
            exprs = list(amap.results)
            for position, expr in enumerate(exprs):
                dim = _bounded_dim(expr, ranges)
                if dim is not None and shape is not None and shape[position] == ranges[dim]:
                    exprs[position] = ir.AffineDimExpr.get(dim)
                    dropped += 1
                    changed = True
            maps[index] = ir.AffineMap.get(amap.n_dims, amap.n_symbols, exprs)
        if changed:
            op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    return dropped


__all__ = ["drop_bounded_mods", "reads_leading_part"]
