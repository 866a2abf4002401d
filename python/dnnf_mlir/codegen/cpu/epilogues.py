"""A convolution's element-wise consumer moved into the shape its kernel computes,
so that the kernel applies it to the output tile in registers before the single
store (its epilogue: ``conv.py``, ``matmul.py``) instead of a second pass over a
result written whole.

The convolution rewrites of ``convolutions.py`` put a reshape between a convolution
and its bias, activation or residual add: ``pad_convolutions`` computes whole vectors
along the output width and slices the columns the model has; ``convolutions_to_matmul``
computes a 1x1 (or narrow) convolution as a matmul over collapsed shapes and expands the result.
These rewrites move the reshape after the consumer:

* ``widen_epilogues``: ``g(extract_slice(conv))`` -> ``extract_slice(g'(conv))``, g'
  also computing the padding columns, when none of g's other operands varies along
  the width (a per-channel bias does not; a residual would need a padded copy);
* ``collapse_epilogues``: ``g(expand_shape(matmul))`` -> ``expand_shape(g'(matmul))``,
  g' over the matmul's ``[F, OH*OW]``, a residual collapsed the same way (a view), a
  per-channel bias read along F.

The importer's matmuls of 3-D activations (a transformer's ``[1, S, D]`` by ``[D, F]``)
are 2-D matmuls whose result is expanded by unit dims only (``[S, F]`` ->
``[1, S, F]``); ``collapse_epilogues`` moves that expansion after their consumer too
(a GELU, a bias, a residual add), which the kernel then applies per register tile
instead of in a second pass over the whole result (BERT's FFN: 128 x 3072).
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import with_operands
from ..linalg_queries import (elementwise_consumer, indexing_maps, only_user, reassociation, reassociation_groups,
                              static_tensor_type)

CONVOLUTIONS = ("linalg.conv_2d_nchw_fchw",)


def _map_dims(amap) -> set:
    return {ir.AffineDimExpr(e).position for e in amap.results if isinstance(e, ir.AffineDimExpr)}


def widen_epilogues(module: ir.Module) -> int:
    """``g(extract_slice(conv))`` -> ``extract_slice(g'(conv))`` (see above); returns
    how many consumers were widened."""
    tensor = _mlir.tensor
    count = 0
    for slice_op in walk_ops(module.operation, {"tensor.extract_slice"}):
        source = slice_op.operands[0]
        if not isinstance(source, ir.OpResult) or source.owner.name not in CONVOLUTIONS or only_user(source) is None:
            continue
        consumer = elementwise_consumer(slice_op)
        wide, narrow = static_tensor_type(source), static_tensor_type(slice_op.results[0])
        if consumer is None or wide is None or narrow is None or wide.rank != 4:
            continue
        offsets, strides = list(slice_op.attributes["static_offsets"]), list(slice_op.attributes["static_strides"])
        if any(offsets) or any(s != 1 for s in strides) or list(wide.shape[:3]) != list(narrow.shape[:3]):
            continue
        maps = indexing_maps(consumer)
        inputs = list(consumer.operands)[:-1]
        if any(3 in _map_dims(amap) for value, amap in zip(inputs, maps) if value != slice_op.results[0]):
            continue
        with ir.InsertionPoint(consumer), consumer.location:
            new_inputs = [source if value == slice_op.results[0] else value for value in inputs]
            init = tensor.empty(list(wide.shape), wide.element_type)
            (result,) = with_operands(consumer, new_inputs, maps, [init])
            narrowed = tensor.extract_slice(narrow, result, [], [], [], [0] * 4, list(narrow.shape), [1] * 4)
        consumer.results[0].replace_all_uses_with(narrowed)
        consumer.erase()
        slice_op.erase()
        count += 1
    return count


def collapse_epilogues(module: ir.Module) -> int:
    """``g(expand_shape(matmul))`` -> ``expand_shape(g'(matmul))`` for the matmuls of
    1x1 convolutions and those whose result gains unit dims only (see above); returns
    how many consumers were collapsed."""
    tensor = _mlir.tensor
    count = 0
    for expand in walk_ops(module.operation, {"tensor.expand_shape"}):
        source = expand.operands[0]
        if not isinstance(source, ir.OpResult) or source.owner.name != "linalg.matmul" or only_user(source) is None:
            continue
        consumer = elementwise_consumer(expand)
        flat, image = static_tensor_type(source), static_tensor_type(expand.results[0])
        if consumer is None or flat is None or image is None:
            continue
        groups = reassociation_groups(expand)
        kept = _unit_expansion(groups, image)
        if image.rank == 4 and image.shape[0] == 1 and groups == [[0, 1], [2, 3]]:
            def read(value, amap):
                return _collapsed_operand(value, amap, expand, source)
        elif kept is not None:
            def read(value, amap):
                return _unit_expanded_operand(value, amap, expand, source, groups, kept)
        else:
            continue
        maps = indexing_maps(consumer)
        with ir.InsertionPoint(consumer), consumer.location:
            inputs = [read(value, amap) for value, amap in zip(list(consumer.operands)[:-1], maps)]
            if any(i is None for i in inputs):
                continue  # (nothing was built but collapse_shape views, which canonicalize drops)
            init = tensor.empty(list(flat.shape), flat.element_type)
            (result,) = with_operands(consumer, [v for v, _ in inputs], [m for _, m in inputs] + [_identity(2)], [init], ["parallel"] * 2)
            expanded = tensor.expand_shape(image, result, reassociation(groups), [], list(image.shape))
        consumer.results[0].replace_all_uses_with(expanded)
        consumer.erase()
        expand.erase()
        count += 1
    return count


def _collapsed_operand(value, amap, expand, matmul_result):
    """(value, map) reading operand ``value`` of the consumer over ``[F, OH*OW]``
    instead of ``[1, F, OH, OW]``, or None when it cannot be: the expanded result is
    the matmul's; a whole image is collapsed like it; an operand varying along F only
    (a bias, its size-1 dims collapsed away) is read along F."""
    tensor = _mlir.tensor
    if value == expand.results[0]:
        return matmul_result, _identity(2)
    t = static_tensor_type(value)
    if t is None:
        return None
    dims = _map_dims(amap)
    if amap == _identity(4):
        collapsed = ir.RankedTensorType.get([t.shape[0] * t.shape[1], t.shape[2] * t.shape[3]], t.element_type)
        return tensor.collapse_shape(collapsed, value, reassociation([[0, 1], [2, 3]])), _identity(2)
    if dims - {0, 1}:
        return None  # varies along the image: not expressible over OH*OW
    along_f = [i for i, e in enumerate(amap.results) if isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == 1]
    if any(size != 1 for i, size in enumerate(t.shape) if i not in along_f):
        return None
    rank = 1 if along_f else 0
    results = [ir.AffineDimExpr.get(0)] if along_f else []
    if t.rank != rank or (along_f and along_f != [0]):
        groups = [list(range(t.rank))] if along_f else []
        value = tensor.collapse_shape(ir.RankedTensorType.get([t.shape[i] for i in along_f], t.element_type), value, reassociation(groups))
    return value, ir.AffineMap.get(2, 0, results)


def _unit_expansion(groups: list, image) -> list | None:
    """The dim of ``image`` (an expand_shape's result, reassociated by ``groups``) that
    each dim of its source becomes when the expansion adds unit dims only: the group's
    one dim of extent > 1, or its last dim when all are units; else None."""
    kept = []
    for group in groups:
        wide = [d for d in group if image.shape[d] != 1]
        if len(wide) > 1:
            return None
        kept.append(wide[0] if wide else group[-1])
    return kept


def _unit_expanded_operand(value, amap, expand, matmul_result, groups: list, kept: list):
    """(value, map) reading operand ``value`` of the consumer over the matmul's 2-D
    result instead of its expansion by unit dims (``kept``: the image dim of each
    result dim): the expanded result is the matmul's; an operand of the image's
    shape read whole is collapsed like it (a view); a broadcast operand reads at 0
    along the unit dims, which it can only have as units too."""
    if value == expand.results[0]:
        return matmul_result, _identity(2)
    t = static_tensor_type(value)
    image = static_tensor_type(expand.results[0])
    if t is None:
        return None
    if amap == _identity(image.rank) and list(t.shape) == list(image.shape):
        flat = ir.RankedTensorType.get([t.shape[d] for d in kept], t.element_type)
        return _mlir.tensor.collapse_shape(flat, value, reassociation(groups)), _identity(2)
    results = []
    for expr in amap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            results.append(expr)  # the constant 0 of a broadcast (elementwise_consumer)
            continue
        position = ir.AffineDimExpr(expr).position
        results.append(ir.AffineDimExpr.get(kept.index(position)) if position in kept else ir.AffineConstantExpr.get(0))
    return value, ir.AffineMap.get(2, 0, results)


def _identity(rank: int):
    return ir.AffineMap.get_identity(rank)


__all__ = ["collapse_epilogues", "widen_epilogues"]
