"""Stride-1 convolutions computed over flat rows of whole vectors.

The direct convolution's register tile is FR channels x WV columns of one output row
(``conv.py``), so a row of OW columns is computed as ``ceil(OW / WV) * WV``: DenseNet's
3x3 128 -> 32 at 56x56 computes 64 columns a row (14% of the FMAs wasted), at 14x14 rows
of 16 (half the register tile, which amortizes the weight broadcasts worse). Over the
zero-padded input ``[1, C, HP, WP]`` collapsed to ``[1, C, HP * WP]`` (a view), output
``(oh, ow)`` laid out with the input's pitch, ``k = oh * WP + ow``, reads tap ``(i, j)``
at flat element ``k + i * WP + j``, so the KH rows of the window are KH convolutions of
a ``1 x KW`` window over one flat row, accumulated in the same register tiles
(``conv.accumulated_convolutions``, as a strided convolution's phases)::

    y[f, k] = sum over (c, i, j) of x_flat[c, k + i*WP + j] * w[f, c, i, j]

on ``L`` = OH * WP columns rounded up to whole register tiles; the columns ``ow >= OW``
of each row (``KW - 1`` of them) and the tail past ``OH * WP`` are computed and dropped,
and the pad gets the zero rows at the bottom that those read. DenseNet's 56x56 layer
computes 3264 columns instead of 3584, its 14x14 one 224 in tiles of 32 instead of 14
rows of 16. An element-wise consumer that varies along the channels only (bias, ReLU)
is moved onto the flat result, to stay the convolution's epilogue; a convolution whose
consumer varies over the image (a residual add, which the row schedule applies in its
tiles) keeps its rows.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import make_pad, with_operands
from ..linalg_queries import conv_params, elementwise_consumer, indexing_maps, is_f32, linalg_ops, only_user
from ..linalg_queries import reassociation, static_tensor_type
from .convolutions import pad_value, static_pad
from .target import CpuTarget
from .tiles import conv_vector_tile, conv_width_throughput

# The flat rows are used when they save at least this fraction of the row schedule's
# modelled time (columns computed over the width's throughput, ``conv_width_throughput``):
# DenseNet's 28x28 layer (840 columns in 864 instead of 28 rows of 32, 3.6% fewer) measured
# 0.253 against 0.256 ms alone (fastest of 6 runs), 0.299 against 0.318 ms with its concat
# and batch normalization (AVX-512, one thread).
MIN_SAVING = 0.03


def flat_columns(oh: int, ow: int, kw: int, f: int, target: CpuTarget):
    """(columns computed, register tile width) of the flat rows of an ``oh x ow``
    output with a window ``kw`` wide, or None when the row schedule is modelled
    at most ``MIN_SAVING`` slower."""
    pitch = ow + kw - 1
    _, wv_rows, padded = conv_vector_tile(ow, f, target)
    _, wv_flat, length = conv_vector_tile(oh * pitch, f, target)
    rows_cost = oh * padded / conv_width_throughput(wv_rows, target)
    flat_cost = length / conv_width_throughput(wv_flat, target)
    return (length, wv_flat) if flat_cost <= (1 - MIN_SAVING) * rows_cost else None


def _zero_padded(x, x_t, extra_rows: int):
    """``x`` with ``extra_rows`` zero rows at the bottom, merged into its zero
    ``tensor.pad`` when it has one (one copy of the input, not two)."""
    pad_op = x.owner if isinstance(x, ir.OpResult) else None
    value = pad_value(pad_op) if pad_op is not None and pad_op.name == "tensor.pad" else None
    if value is not None and static_pad(pad_op) is not None:
        low, high = static_pad(pad_op)
        source = pad_op.operands[0]
    else:
        low, high, source = [0] * 4, [0] * 4, x
        value = _mlir.arith.constant(x_t.element_type, 0.0)
    high = list(high)
    high[2] += extra_rows
    return make_pad(source, low, high, value)


def _flat_init(init, f: int, length: int, f32):
    """The accumulator's init over ``[1, F, 1, length]``: a fill, or a bias broadcast
    along the image; None for anything else (a residual read per pixel)."""
    linalg, tensor = _mlir.linalg, _mlir.tensor
    owner = init.owner if isinstance(init, ir.OpResult) else None
    if owner is None:
        return None
    empty = tensor.empty([1, f, 1, length], f32)
    if owner.name == "linalg.fill":
        return linalg.fill(owner.operands[0], outs=[empty])
    if owner.name == "linalg.broadcast" and "dimensions" in owner.attributes:
        dims = list(ir.DenseI64ArrayAttr(owner.attributes["dimensions"]))
        if sorted(dims) == [0, 2, 3]:
            return linalg.broadcast(owner.operands[0], outs=[empty], dimensions=dims).result
    return None


def _per_channel_consumer(conv_result):
    """The element-wise consumer of ``conv_result`` whose other inputs vary along
    the channels at most (a bias, nothing for ReLU), else None."""
    consumer = elementwise_consumer(conv_result.owner)
    if consumer is None:
        return None
    for value, amap in zip(list(consumer.operands)[:-1], indexing_maps(consumer)):
        if value == conv_result:
            continue
        used = {ir.AffineDimExpr(e).position for e in amap.results if isinstance(e, ir.AffineDimExpr)}
        if used - {0, 1} or any(not isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in amap.results):
            return None  # (a constant index reads a unit dim: a bias [F, 1, 1])
    return consumer


def _candidates(module: ir.Module, target: CpuTarget):
    """(op, input type, filter type, output type, flat columns) of each convolution
    that the flat rows suit: f32, static, one image, stride and dilation 1."""
    for op in linalg_ops(module):
        if op.name != "linalg.conv_2d_nchw_fchw" or len(op.results) != 1:
            continue
        types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
        if any(t is None or not is_f32(t) for t in types) or conv_params(op) != ([1, 1], [1, 1]):
            continue
        x_t, w_t, out_t = types
        n, f, oh, ow = out_t.shape
        kh, kw = w_t.shape[2:]
        if n != 1 or kw == 1 or x_t.shape[2:] != [oh + kh - 1, ow + kw - 1]:
            continue
        if elementwise_consumer(op) is not None and _per_channel_consumer(op.results[0]) is None:
            continue  # a residual add: the row schedule's epilogue, not a pass of its own
        flat = flat_columns(oh, ow, kw, f, target)
        if flat is not None:
            yield op, x_t, w_t, out_t, flat[0]


def flat_row_convolutions(module: ir.Module, target: CpuTarget) -> int:
    """Rewrite the convolutions that gain (``flat_columns``) as KH accumulated
    convolutions over flat rows (see above); returns how many were rewritten."""
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op, x_t, w_t, out_t, length in list(_candidates(module, target)):
        _, f, oh, ow = out_t.shape
        _, c, kh, kw = w_t.shape
        hp, pitch = x_t.shape[2:]
        f32 = out_t.element_type
        span = length + kw - 1  # input columns one flat convolution reads
        rows = math.ceil(((kh - 1) * pitch + span) / pitch)
        with ir.InsertionPoint(op), op.location:
            init = _flat_init(op.operands[2], f, length, f32)
            if init is None:
                continue
            padded = _zero_padded(op.operands[0], x_t, rows - hp)
            flat = _regroup(padded, [1, c, 1, rows * pitch], f32)
            result = init
            for i in range(kh):
                row = tensor.extract_slice(ir.RankedTensorType.get([1, c, 1, span], f32), flat, [], [], [],
                                           [0, 0, 0, i * pitch], [1, c, 1, span], [1, 1, 1, 1])
                taps = tensor.extract_slice(ir.RankedTensorType.get([f, c, 1, kw], f32), op.operands[1], [], [], [],
                                            [0, 0, i, 0], [f, c, 1, kw], [1, 1, 1, 1])
                result = linalg.conv_2d_nchw_fchw(row, taps, outs=[result], strides=[1, 1], dilations=[1, 1])
        consumer = _per_channel_consumer(op.results[0])
        # The consumer's other operands (a bias reshaped) may be defined after the
        # convolution: the epilogue and the slices out of the flat rows go where it is.
        with ir.InsertionPoint(consumer or op), (consumer or op).location:
            if consumer is not None:
                inputs = [result if v == op.results[0] else v for v in list(consumer.operands)[:-1]]
                (result,) = with_operands(consumer, inputs, indexing_maps(consumer), [tensor.empty([1, f, 1, length], f32)])
            image = _image(result, f, oh, ow, pitch, f32)
        old_init = op.operands[2].owner
        (consumer or op).results[0].replace_all_uses_with(image)
        if consumer is not None:
            consumer.erase()
        op.erase()
        if all(len(list(r.uses)) == 0 for r in old_init.results):
            old_init.erase()
        count += 1
    return count


def _image(flat, f: int, oh: int, ow: int, pitch: int, f32):
    """``[1, F, OH, OW]`` out of the flat result ``[1, F, 1, L]``: its first OH rows of
    ``pitch`` columns, the first OW of each."""
    tensor = _mlir.tensor
    rows = tensor.extract_slice(ir.RankedTensorType.get([1, f, 1, oh * pitch], f32), flat, [], [], [],
                                [0, 0, 0, 0], [1, f, 1, oh * pitch], [1, 1, 1, 1])
    grid = _regroup(rows, [1, f, oh, pitch], f32)
    return tensor.extract_slice(ir.RankedTensorType.get([1, f, oh, ow], f32), grid, [], [], [],
                                [0, 0, 0, 0], [1, f, oh, ow], [1, 1, 1, 1])



def _regroup(value, shape, f32):
    """``value`` ``[N, C, A, B]`` viewed as ``shape`` ``[N, C, A', B']`` (A * B = A' * B'):
    its last two dims collapsed into one and expanded again."""
    tensor = _mlir.tensor
    n, c, a, b = static_tensor_type(value).shape
    groups = reassociation([[0], [1], [2, 3]])
    merged = tensor.collapse_shape(ir.RankedTensorType.get([n, c, a * b], f32), value, groups)
    return tensor.expand_shape(ir.RankedTensorType.get(shape, f32), merged, groups, [], shape)


__all__ = ["MIN_SAVING", "flat_columns", "flat_row_convolutions"]
