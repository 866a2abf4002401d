"""The element-wise consumer of a grouped 1x1 convolution moved into the batch
matmul's ``[G, F, P]`` shape, so that it becomes the matmul's epilogue.

``split_grouped_convolutions`` computes a 1x1 grouped convolution (ShuffleNet's) as
``batch_matmul`` over the groups, ``[G, F, P]``, reshaped back into the image
``[1, G*F, OH, OW]``; its bias, ReLU and residual add (one element-wise generic after
``prepare.pipeline``) read that image, so the planner found no epilogue: the product
was stored, then read and written again by a pass of its own. Here
``g(reshapes(batch_matmul))`` becomes ``reshapes(g'(batch_matmul))``, g' over
``[G, F, P]``: the product read as it is, an operand read whole (a residual) through
the same reshapes (views), one varying along the channels only (a bias) as ``[G, F]``,
a scalar as it was. The reshapes preserve the row-major order of the elements, so
channel ``g*F + f``, pixel ``p`` of the image is element ``(g, f, p)`` of the product.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import with_operands
from ..linalg_queries import (TENSOR_RESHAPES, elementwise_consumer, indexing_maps, only_user, reassociation,
                              static_tensor_type)

SHUFFLED = "dnnf.shuffled_epilogue"  # unit attribute on a consumer that writes the channel shuffle


def grouped_epilogues(module: ir.Module) -> int:
    """Move the element-wise consumer of each batch matmul of a grouped 1x1 convolution
    into its shape (see above); returns how many were moved."""
    count = 0
    for op in list(walk_ops(module.operation, {"linalg.batch_matmul"})):
        product = static_tensor_type(op.results[0]) if len(op.results) == 1 else None
        image, reshapes = _image_through_reshapes(op)
        if product is None or image is None:
            continue
        consumer = elementwise_consumer(image.owner)
        shape = list(static_tensor_type(image).shape)
        g, f, p = product.shape
        # The image's channels: one dim [1, G*F, ...], or two [1, G, F, ...] (where
        # upstream's fusion by expansion already expanded the consumer).
        lead = 1 if shape[1:2] == [g * f] else 2 if shape[1:3] == [g, f] else 0
        if consumer is None or not lead or shape[0] != 1 or math.prod(shape[1 + lead:]) != p:
            continue
        if _move_consumer(consumer, image, op.results[0], shape, lead):
            for reshape in reversed(reshapes):
                reshape.erase()
            count += 1
    return count


def _image_through_reshapes(op):
    """(the value ``op``'s result becomes through a chain of single-use reshapes, those
    reshapes in order), or (None, []) when there is no reshape."""
    value, chain = op.results[0], []
    while (user := only_user(value)) is not None and user.name in TENSOR_RESHAPES:
        chain.append(user)
        value = user.results[0]
    return (value, chain) if chain else (None, [])


def _move_consumer(consumer, image, product, shape, lead: int) -> bool:
    """Rebuild ``consumer`` (reading ``image``, of ``shape``, its channels ``lead`` dims)
    over the ``[G, F, P]`` of ``product``; False, with nothing changed, when an operand
    cannot be read there."""
    tensor = _mlir.tensor
    g, f, p = static_tensor_type(product).shape
    maps = indexing_maps(consumer)
    operands = list(consumer.operands)[:-1]
    plans = [_operand_plan(value, amap, image, lead) for value, amap in zip(operands, maps)]
    if any(plan is None for plan in plans):
        return False
    rank = len(shape)
    image_groups = [list(range(lead + 1)), list(range(lead + 1, rank))]  # [G*F, P] of the image
    f32 = static_tensor_type(product).element_type
    with ir.InsertionPoint(consumer), consumer.location:
        inputs, new_maps = [], []
        for value, amap, plan in zip(operands, maps, plans):
            if plan == "product":
                inputs.append(product)
                new_maps.append(ir.AffineMap.get_identity(3))
            elif plan == "whole":
                flat = tensor.collapse_shape(ir.RankedTensorType.get([g * f, p], f32), value, reassociation(image_groups))
                inputs.append(tensor.expand_shape(ir.RankedTensorType.get([g, f, p], f32), flat,
                                                  reassociation([[0, 1], [2]]), [], [g, f, p]))
                new_maps.append(ir.AffineMap.get_identity(3))
            elif plan == "channels":
                t = static_tensor_type(value)
                flat = value if t.rank == 1 else tensor.collapse_shape(
                    ir.RankedTensorType.get([g * f], t.element_type), value, reassociation([list(range(t.rank))]))
                inputs.append(tensor.expand_shape(ir.RankedTensorType.get([g, f], t.element_type), flat,
                                                  reassociation([[0, 1]]), [], [g, f]))
                new_maps.append(ir.AffineMap.get(3, 0, [ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)]))
            else:  # a scalar: every result a constant 0
                inputs.append(value)
                new_maps.append(ir.AffineMap.get(3, 0, [ir.AffineConstantExpr.get(0)] * len(amap.results)))
        shuffle, between = _channel_shuffle(consumer.results[0], g, f, p)
        if shuffle is None:
            init = tensor.empty([g, f, p], f32)
            (result,) = with_operands(consumer, inputs, new_maps + [ir.AffineMap.get_identity(3)], [init], ["parallel"] * 3)
            flat = tensor.collapse_shape(ir.RankedTensorType.get([g * f, p], f32), result, reassociation([[0, 1], [2]]))
            moved = tensor.expand_shape(ir.RankedTensorType.get(shape, f32), flat, reassociation(image_groups), [], shape)
            replaced = consumer
        else:
            # Written shuffled: element (g, f, p) to (f, g, p), the transpose's result.
            init = tensor.empty([f, g, p], f32)
            swapped = ir.AffineMap.get(3, 0, [ir.AffineDimExpr.get(1), ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(2)])
            (result,) = with_operands(consumer, inputs, new_maps + [swapped], [init], ["parallel"] * 3)
            result.owner.attributes[SHUFFLED] = ir.UnitAttr.get()
            out_shape = list(static_tensor_type(shuffle.results[0]).shape)
            moved = tensor.expand_shape(ir.RankedTensorType.get(out_shape, f32), result,
                                        reassociation([[0, 1], [2], list(range(3, len(out_shape)))]), [], out_shape)
            replaced = shuffle
    replaced.results[0].replace_all_uses_with(moved)
    if shuffle is not None:
        shuffle.erase()
        for reshape in reversed(between):
            reshape.erase()
    consumer.erase()
    return True


def _channel_shuffle(value, g: int, f: int, p: int):
    """(the ``linalg.transpose`` that ``value`` reaches through single-use reshapes,
    those reshapes) when it is ShuffleNet's channel shuffle of ``g`` groups of ``f``
    channels: ``[1, G, F, ...]`` -> ``[1, F, G, ...]``, ``p`` pixels; else (None, [])."""
    chain = []
    while (user := only_user(value)) is not None and user.name in TENSOR_RESHAPES:
        chain.append(user)
        value = user.results[0]
    if user is None or user.name != "linalg.transpose" or user.operands[0] != value:
        return None, []
    shape = static_tensor_type(value).shape
    perm = list(ir.DenseI64ArrayAttr(user.attributes["permutation"]))
    if len(shape) < 3 or list(shape[:3]) != [1, g, f] or math.prod(shape[3:]) != p:
        return None, []
    if perm != [0, 2, 1] + list(range(3, len(shape))):
        return None, []
    return user, chain


def _operand_plan(value, amap, image, lead: int):
    """How an operand of the consumer is read over ``[G, F, P]``: "product" (the image),
    "whole" (identity map, the image's shape), "channels" (varies along the channel
    dims only, in order, its other dims of size 1), "scalar" (constant map), or None. A
    loop of extent 1 reads index 0 whatever its map."""
    if value == image:
        return "product"
    t = static_tensor_type(value)
    shape = list(static_tensor_type(image).shape)
    if t is None:
        return None
    if amap == ir.AffineMap.get_identity(len(shape)):
        return "whole" if list(t.shape) == shape else None
    dims = [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None for e in amap.results]
    if any(d is None and not (isinstance(e, ir.AffineConstantExpr) and ir.AffineConstantExpr(e).value == 0)
           for d, e in zip(dims, amap.results)):
        return None
    dims = [None if d is not None and shape[d] == 1 else d for d in dims]  # a loop of extent 1 reads index 0
    read = [d for d in dims if d is not None]
    if not read:
        return "scalar"
    channels = [d for d in range(1, lead + 1) if shape[d] != 1]
    if read != channels:
        return None
    if any(size != 1 for size, d in zip(t.shape, dims) if d is None):
        return None
    return "channels"


def writes_shuffled(op) -> bool:
    """Whether the only user of ``op``'s result is a consumer moved here that writes the
    channel shuffle (its output map a permutation): the planner takes it as an epilogue."""
    user = only_user(op.results[0]) if len(op.results) == 1 else None
    return user is not None and SHUFFLED in user.attributes


__all__ = ["SHUFFLED", "grouped_epilogues", "writes_shuffled"]
