"""A per-channel element-wise op over a channel concat computed piece by piece, each piece
copied into the concat in the same pass.

A DenseNet layer's kernel writes the growing concat of its block (the earlier layers'
channels and its own 32) and the next layer's batch normalization + ReLU of all of it:
``y = g(concat(a, b))`` where the concat is a kernel output too. As written, the concat is
copied whole (a read and a write of every element) and ``g`` reads it back: four passes
over the concat's bytes, the op memory-bound. Here each piece ``p`` of the concat (the
channels of one operand) is one ``linalg.generic`` with two results, ``p`` itself and
``g(p)`` (``g``'s per-channel operands sliced to the piece's channels), written into
slices of the concat and of ``y`` (``tensor.insert_slice`` of results computed into
``extract_slice``s of the same tensors: bufferized in place): three passes. A concat
used by ``g`` alone is not materialized at all (``g`` of each piece, two passes). A chain of
channel concats (ECG's concat is binary: a concat of n tensors is n - 1 of them) is one
concat of all its pieces: an inner concat read by the outer one alone is never built.

``g`` must be all-parallel, read the concat with the identity map and its other inputs
along the channels at most (a batch normalization's scale and shift; ReLU reads nothing),
and not read its init.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import generic, inline_body, insert_at, slice_at
from ..linalg_queries import indexing_maps, is_f32, parallel_loops, reassociation, static_tensor_type


def _per_channel_user(concat):
    """The element-wise ``linalg.generic`` reading ``concat`` (rank 4, channels) with
    the identity map whose other inputs vary along the channels at most, or None."""
    users = [use.owner for use in concat.results[0].uses if use.owner.name == "linalg.generic"]
    identity = ir.AffineMap.get_identity(4)
    for user in users:
        maps = indexing_maps(user)
        parallel = parallel_loops(user)
        out = static_tensor_type(user.results[0]) if len(user.results) == 1 else None
        if out is None or not is_f32(out) or parallel is None or not all(parallel) or len(parallel) != 4:
            continue
        inputs = list(user.operands)[:-1]
        if maps[-1] != identity or inputs.count(concat.results[0]) != 1:
            continue
        if list(user.regions[0].blocks[0].arguments[-1].uses):
            continue  # reads its init: the pieces' inits would be new allocations
        if all(_reads_channels_only(v, m, concat.results[0], identity) for v, m in zip(inputs, maps)):
            return user
    return None


def _reads_channels_only(value, amap, concat_value, identity) -> bool:
    if value == concat_value:
        return amap == identity
    for e in amap.results:
        if isinstance(e, ir.AffineDimExpr):
            if ir.AffineDimExpr(e).position != 1:
                return False
        elif not isinstance(e, ir.AffineConstantExpr):
            return False
    return True


def _piece_operand(value, amap, first: int, count: int):
    """``value`` read by map ``amap`` restricted to the channels [first, first + count):
    sliced along each of its dims indexed by the channel dim."""
    t = static_tensor_type(value)
    offsets, sizes = [0] * t.rank, list(t.shape)
    for dim, e in enumerate(amap.results):
        if isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == 1:
            offsets[dim], sizes[dim] = first, count
    return slice_at(value, offsets, sizes)


def _planes_contiguous(value) -> bool:
    """Whether ``value`` ``[N, C, H, W]`` views as ``[N, C, H * W]``: not a slice, or a
    slice taking its rows whole."""
    source = value.owner if isinstance(value, ir.OpResult) else None
    if source is None or source.name != "tensor.extract_slice":
        return True
    whole = static_tensor_type(source.operands[0])
    return whole.rank == 4 and list(static_tensor_type(value).shape[2:]) == list(whole.shape[2:])


def _planes(value):
    """``value`` ``[N, C, H, W]`` viewed as ``[N, C, H * W]``."""
    n, c, h, w = static_tensor_type(value).shape
    t = ir.RankedTensorType.get([n, c, h * w], static_tensor_type(value).element_type)
    return _mlir.tensor.collapse_shape(t, value, reassociation([[0], [1], [2, 3]]))


def _images(value, shape):
    """``value`` ``[N, C, H * W]`` viewed as ``shape`` ``[N, C, H, W]``."""
    t = ir.RankedTensorType.get(list(shape), static_tensor_type(value).element_type)
    return _mlir.tensor.expand_shape(t, value, reassociation([[0], [1], [2, 3]]), [], list(shape))


def _on_planes(amap):
    """A 4-loop map of the op (the identity, or reading the channels at most) over the
    3 loops of ``[N, C, H * W]``."""
    if amap == ir.AffineMap.get_identity(4):
        return ir.AffineMap.get_identity(3)
    return ir.AffineMap.get(3, 0, list(amap.results))


def _inner_concat(value):
    """The channel ``tensor.concat`` that produces ``value`` for its one user, or None."""
    inner = value.owner if isinstance(value, ir.OpResult) else None
    if inner is None or inner.name != "tensor.concat" or ir.IntegerAttr(inner.attributes["dim"]).value != 1:
        return None
    return inner if len(list(value.uses)) == 1 else None


def _pieces(concat) -> tuple:
    """(the pieces of ``concat``, an operand that a channel concat read by it alone produces
    taken as that concat's pieces: ECG's concat is binary, so a concat of n tensors is a chain;
    those inner concats, outer first)."""
    pieces, inners = [], []
    for value in concat.operands:
        inner = _inner_concat(value)
        if inner is None:
            pieces.append(value)
        else:
            inner_pieces, inner_inners = _pieces(inner)
            pieces += inner_pieces
            inners += [inner] + inner_inners
    return pieces, inners


def pointwise_over_concat_pieces(module: ir.Module) -> int:
    """Rewrite each ``g(concat(...))`` of the kind above piece by piece; returns how
    many were rewritten."""
    count = 0
    for concat in walk_ops(module.operation, {"tensor.concat"}):
        cat_t = static_tensor_type(concat.results[0])
        if cat_t is None or cat_t.rank != 4 or ir.IntegerAttr(concat.attributes["dim"]).value != 1:
            continue
        user = _per_channel_user(concat)
        if user is None:
            continue
        keep = len(list(concat.results[0].uses)) > 1
        maps = indexing_maps(user)
        inputs = list(user.operands)[:-1]
        out_t = static_tensor_type(user.results[0])
        block = user.regions[0].blocks[0]
        with ir.InsertionPoint(user), user.location:
            # Allocations, not empty tensors, which CSE would merge into one (the two
            # results then copied out of each other by bufferization).
            y = _mlir.bufferization.AllocTensorOp(out_t, []).result
            whole = _mlir.bufferization.AllocTensorOp(cat_t, []).result if keep else None
            first = 0
            pieces, inners = _pieces(concat)
            for piece in pieces:
                channels = static_tensor_type(piece).shape[1]
                offsets, sizes = [0, first, 0, 0], [cat_t.shape[0], channels, *cat_t.shape[2:]]
                piece_inputs = [piece if v == concat.results[0] else _piece_operand(v, m, first, channels)
                                for v, m in zip(inputs, maps)]
                outs = [slice_at(y, offsets, sizes)] + ([slice_at(whole, offsets, sizes)] if keep else [])
                position = inputs.index(concat.results[0])
                piece_maps = maps[:-1] + [maps[-1]] * len(outs)
                planes = _planes_contiguous(piece)
                if planes:  # one row per channel: whole vectors but the plane's last
                    piece_inputs = [_planes(v) if v == piece else v for v in piece_inputs]
                    outs = [_planes(v) for v in outs]
                    piece_maps = [_on_planes(m) for m in piece_maps]

                def body(*scalars, piece_inputs=piece_inputs, position=position):
                    values = dict(zip(block.arguments, scalars[:len(piece_inputs)] + scalars[len(piece_inputs):][:1]))
                    computed = inline_body(block, values)
                    return computed + ([scalars[position]] if keep else [])

                results = generic(piece_inputs, piece_maps, outs, body)
                if planes:
                    results = [_images(r, sizes) for r in results]
                y = insert_at(results[0], y, offsets)
                if keep:
                    whole = insert_at(results[1], whole, offsets)
                first += channels
        user.results[0].replace_all_uses_with(y)
        user.erase()
        if keep:
            concat.results[0].replace_all_uses_with(whole)
        concat.erase()
        for inner in inners:
            inner.erase()
        count += 1
    return count


__all__ = ["pointwise_over_concat_pieces"]
