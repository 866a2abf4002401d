"""Reshapes and slices inside a GPU kernel folded into the indexing maps of the ops that
read them.

Fusion cannot tile through ``tensor.expand_shape`` / ``collapse_shape``: a kernel whose
softmax result is reshaped before its division would compute the softmax in a buffer
of its own, outside the dispatch's loops. A reshape of a value computed in the kernel
(or of an argument, adding or dropping unit dims only) is instead read through it: its
consumer reads the source with the reshape composed into its indexing map.

* ``expand_shape``: the source index of a group is the expanded indices linearized,
  ``i_0 * s_1 * ... + ... + i_k`` (heads split from a projection: ``h * 64 + d``),
  unit dims left out;
* ``collapse_shape`` of groups with at most one dim above 1 (unit dims dropped):
  the collapsed index, at the dim above 1, 0 elsewhere; of groups with several, the
  digits of the index read where it splits into them over the consumer's loop ranges
  (a channel shuffle's ``g * 28 + k``), else nothing;

* ``extract_slice`` (static, keeping the rank): ``offset + stride * i`` (a merged
  projection's Q, K and V columns), ``i mod n`` for the leading part of a dim of ``n``
  (``partial_reads``).

A concatenation is read through its reshapes too, so that its readers split at its
pieces (``concats.py``). Other collapses (which would need ``floordiv``/``mod`` maps)
are left alone.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import (TENSOR_RESHAPES, indexing_maps, linalg_input_count, reassociation_groups,
                              static_tensor_type)
from .kernels import is_contraction, loop_ranges, producers, viewed_op
from .partial_reads import reads_leading_part

VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice")


def _linear_terms(expr):
    """``expr`` as {loop dim: coefficient} and a constant; None when it is not a sum of
    dims times constants."""
    if isinstance(expr, ir.AffineDimExpr):
        return {ir.AffineDimExpr(expr).position: 1}, 0
    if isinstance(expr, ir.AffineConstantExpr):
        return {}, ir.AffineConstantExpr(expr).value
    if isinstance(expr, ir.AffineAddExpr):
        lhs, rhs = _linear_terms(ir.AffineAddExpr(expr).lhs), _linear_terms(ir.AffineAddExpr(expr).rhs)
        if lhs is None or rhs is None:
            return None
        terms = dict(lhs[0])
        for dim, coefficient in rhs[0].items():
            terms[dim] = terms.get(dim, 0) + coefficient
        return terms, lhs[1] + rhs[1]
    if isinstance(expr, ir.AffineMulExpr):
        product = ir.AffineMulExpr(expr)
        lhs, rhs = _linear_terms(product.lhs), _linear_terms(product.rhs)
        if lhs is None or rhs is None or (lhs[0] and rhs[0]):
            return None
        (terms, _), factor = (lhs, rhs[1]) if lhs[0] else (rhs, lhs[1])
        return {dim: c * factor for dim, c in terms.items()}, lhs[1] * rhs[1]
    return None


def _mixed_radix(expr, sizes, ranges) -> list | None:
    """The digits of the index ``expr`` into dims of ``sizes`` (outermost first; the
    collapsed index of a group), each an expression of the loop dims: every term goes to
    the outermost digit whose stride divides its coefficient, and each digit must stay
    within its size over the loops' ``ranges`` (then the representation is the unique
    one: a channel shuffle's ``g * 28 + k`` read from 4 x 28 groups is ``(g, k)``)."""
    found = _linear_terms(expr)
    if found is None or found[1] != 0 or ranges is None:
        return None
    strides = [1] * len(sizes)
    for i in reversed(range(len(sizes) - 1)):
        strides[i] = strides[i + 1] * sizes[i + 1]
    digits = [{} for _ in sizes]
    for dim, coefficient in found[0].items():
        i = next((i for i, stride in enumerate(strides) if coefficient % stride == 0), None)
        if i is None or coefficient < 0:
            return None
        digits[i][dim] = coefficient // strides[i]
    exprs = []
    for terms, size in zip(digits, sizes):
        if sum(c * (ranges[dim] - 1) for dim, c in terms.items()) >= size:
            return None
        parts = [ir.AffineDimExpr.get(dim) * c if c != 1 else ir.AffineDimExpr.get(dim) for dim, c in terms.items()]
        exprs.append(sum(parts[1:], parts[0]) if parts else ir.AffineConstantExpr.get(0))
    return exprs


def _source_exprs(reshape, results, ranges=None) -> list | None:
    """The source indices of a reshape as affine expressions of the result indices
    ``results`` (expressions); None when not expressible without floordiv / mod (a
    collapse of several dims above 1 is, when the index read splits into their digits
    over the loops' ``ranges``, ``_mixed_radix``)."""
    groups = reassociation_groups(reshape)
    source = static_tensor_type(reshape.operands[0]).shape
    result = static_tensor_type(reshape.results[0]).shape
    exprs = []
    if reshape.name == "tensor.expand_shape":
        for group in groups:
            total = None
            for dim in group:
                if result[dim] == 1 and len(group) > 1:
                    continue  # always 0: a term of its own would hide the dim the index is
                term = results[dim]
                total = term if total is None else total * result[dim] + term
            if total is None:
                total = results[group[-1]]
            exprs.append(total)
        return exprs
    # collapse_shape: the result has one dim per group
    for position, group in enumerate(groups):
        big = [dim for dim in group if source[dim] != 1]
        if len(big) > 1:
            digits = _mixed_radix(results[position], [source[dim] for dim in group], ranges)
            if digits is None:
                return None
            exprs += digits
            continue
        for dim in group:
            exprs.append(results[position] if dim in big or (not big and dim == group[-1]) else ir.AffineConstantExpr.get(0))
    return exprs


def _slice_exprs(extract, results, phased: bool) -> list | None:
    """The source indices of a static, rank-keeping ``tensor.extract_slice``:
    ``offset + stride * i``; where that is a loop dim alone over the leading part of
    the source (the first half of a row), ``partial_reads.reads_leading_part``, unless
    the source is computed from a contraction (None then: ``_from_contraction``) in a
    kernel that is not ``phased`` (which computes such a source by a launch of its own,
    ``phases.py``)."""
    offsets = list(ir.DenseI64ArrayAttr(extract.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(extract.attributes["static_strides"]))
    dynamic = ir.ShapedType.get_dynamic_size()
    if len(extract.operands) != 1 or len(offsets) != len(results) or dynamic in offsets + strides:
        return None
    parts = zip(results, offsets, strides, static_tensor_type(extract.results[0]).shape,
                static_tensor_type(extract.operands[0]).shape)
    parts = list(parts)
    leading = [isinstance(e, ir.AffineDimExpr) and (stride, offset) == (1, 0) and size != whole
               for e, offset, stride, size, whole in parts]
    if any(leading) and not phased and _from_contraction(extract.operands[0]):
        return None
    return [reads_leading_part(e, whole) if lead else e * stride + offset if (stride, offset) != (1, 0) else e
            for (e, offset, stride, _, whole), lead in zip(parts, leading)]


def _from_contraction(value) -> bool:
    """Whether ``value`` is computed from a contraction in the kernel. Its reader's tiles
    would compute that contraction again, each group of the kernel its own copy, and
    the neighbouring read at a constant offset over the span up to it (LLaMA's
    rotation of its projected queries: 335 to 770 ms on lavapipe fused, against 270 ms
    for the whole model with the kernel a dispatch per op)."""
    source = viewed_op(value)
    return source is not None and any(is_contraction(op) for op in producers(source) | {source.operation})


def _unit_dims_only(reshape) -> bool:
    """Whether a reshape only adds or drops unit dims (each group one dim above 1 at most)."""
    if reshape.name not in TENSOR_RESHAPES:
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
    owner = value.owner.operation.name if isinstance(value, ir.OpResult) else None
    concat = owner == "tensor.concat" and all(v.name != "tensor.extract_slice" for v in chain)
    computed = owner is not None and (owner.startswith("linalg.") or concat)
    if not computed and not (isinstance(value, ir.BlockArgument) and all(_unit_dims_only(v) for v in chain)):
        return None
    return value, chain


def _ranges_inferable(maps, n_dims: int) -> bool:
    """Whether every loop dim is some operand's index alone, as linalg needs to infer the
    loops' ranges: a window dim that the input reads as ``i + d`` and a one-tap slice of
    the weights (a transposed convolution's phase) would read as ``d mod k`` is not."""
    alone = {ir.AffineDimExpr(e).position for m in maps for e in m.results if isinstance(e, ir.AffineDimExpr)}
    return len(alone) == n_dims


def _fold_into(consumer, operand_index: int, source, chain, phased: bool) -> bool:
    maps = indexing_maps(consumer)
    amap = maps[operand_index]
    exprs = list(amap.results)
    for view in chain:  # from the consumer's view back to the source
        if any(static_tensor_type(v) is None for v in (view.operands[0], view.results[0])):
            return False
        exprs = _slice_exprs(view, exprs, phased) if view.name == "tensor.extract_slice" else \
            _source_exprs(view, exprs, loop_ranges(consumer))
        if exprs is None:
            return False
    maps[operand_index] = ir.AffineMap.get(amap.n_dims, amap.n_symbols, exprs)
    if not _ranges_inferable(maps, amap.n_dims):
        return False
    consumer.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    consumer.operands[operand_index] = source
    return True


def reshapes_into_consumers(module: ir.Module, phased: bool = False) -> int:
    """Fold every chain of reshapes and slices of a value computed in the kernel into the
    ``linalg.generic`` inputs that read it (a ``phased`` kernel's leading slices of
    contraction results too); returns how many reads were rewritten."""
    folded = 0
    for consumer in walk_ops(module.operation, {"linalg.generic"}):
        for index in range(linalg_input_count(consumer)):
            found = _view_chain(consumer.operands[index])
            if found is not None:
                folded += _fold_into(consumer, index, *found, phased)
    for view in reversed(walk_ops(module.operation, set(VIEWS))):
        if not list(view.results[0].uses):
            view.erase()
    return folded


__all__ = ["reshapes_into_consumers"]
