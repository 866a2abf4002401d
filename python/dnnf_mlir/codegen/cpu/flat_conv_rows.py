"""Convolutions of stride 1 (and 2) computed over flat rows of whole vectors.

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

A stride-2 convolution reads the padded input split into its four phase planes
(``flat_planes.phase_planes``: plane ``(a, b)`` holds rows ``2r + a``, columns ``2q + b``,
``[HP/2, WP/2]`` each, one after the other in a channel's flat row): tap ``(i, j)`` of
output ``(oh, ow)`` is element ``k + (i // 2) * WP/2 + j // 2`` of plane ``(i % 2, j % 2)``
with ``k = oh * WP/2 + ow``, so window row ``i``'s taps of column phase ``b`` (``j = b,
b + 2, ...``) are one ``1 x ceil((KW - b) / 2)`` convolution over that plane's flat row,
and a 3x3/2 window six of them. ResNet-50's 3x3/2 128 -> 128 from 56x56 computes 812
columns (28 rows of the planes' pitch 29) instead of 28 rows of 32: 25 register tiles
and a last one of 12 columns peeled (``_peeled_length``).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import make_pad, with_operands
from ..linalg_queries import conv_params, elementwise_consumer, indexing_maps, is_f32, linalg_ops, only_user
from ..linalg_queries import reassociation, static_tensor_type
from .convolutions import pad_value, static_pad
from .flat_planes import phase_planes
from .image_phase_planes import image_phase_planes
from .target import CpuTarget
from .tiles import conv_vector_tile, conv_width_throughput, peeled_conv_columns

# The flat rows are used when they save at least this fraction of the row schedule's
# modelled time (columns computed over the width's throughput, ``conv_width_throughput``):
# DenseNet's 28x28 layer (840 columns in 864 instead of 28 rows of 32, 3.6% fewer) measured
# 0.253 against 0.256 ms alone (fastest of 6 runs), 0.299 against 0.318 ms with its concat
# and batch normalization (AVX-512, one thread).
MIN_SAVING = 0.03
# Stride-2 convolutions over their phase planes: windows up to 3x3 (a 7x7/2 stem's 14
# accumulated 1 x 3-4 convolutions over 3 channels each took 1.16x the phases' time),
# over inputs of at least this many channels (the reduction of each of the six
# accumulated convolutions: the stems' 3 leave them all loop overhead; YOLO's 3x3/2
# 32 -> 64 from 24x32 + SiLU took 0.083 against 0.068 ms), with 32 vector
# registers (AVX2's tiles of 4 x 2 accumulators wait on the FMA latency in the six
# short reductions). ResNet-50's 3x3/2 128 -> 128 from 56x56 (812 columns in 832, not
# 28 rows of 32), one thread, minima of 200-300 interleaved runs on a loaded Zen 4:
# AVX-512 2.29 against 2.41 ms (onnxruntime 2.12); AVX2 3.27 against 2.94 ms.
MAX_STRIDED_TAPS = 9
MIN_STRIDED_CHANNELS = 64
MIN_STRIDED_REGISTERS = 32


def flat_columns(oh: int, ow: int, pitch: int, f: int, target: CpuTarget):
    """(columns computed, register tile width) of the flat rows of an ``oh x ow``
    output laid out ``pitch`` columns a row, or None when the row schedule is modelled
    at most ``MIN_SAVING`` slower."""
    _, wv_rows, padded = conv_vector_tile(ow, f, target)
    _, wv_flat, length = conv_vector_tile(oh * pitch, f, target)
    rows_cost = oh * padded / conv_width_throughput(wv_rows, target)
    flat_cost = length / conv_width_throughput(wv_flat, target)
    return (length, wv_flat) if flat_cost <= (1 - MIN_SAVING) * rows_cost else None


def _zero_padded(x, x_t, extra_rows: int, extra_columns: int = 0):
    """``x`` with ``extra_rows`` zero rows at the bottom (and ``extra_columns`` at the
    right), merged into its zero ``tensor.pad`` when it has one (one copy of the input,
    not two)."""
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
    high[3] += extra_columns
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


def flat_pitch(x_shape, w_shape, out_shape, strides, target: CpuTarget):
    """The columns from one flat output row to the next (the padded input's width, or
    its phase planes' for stride 2), or None when the convolution's input is not its
    padded window's exact span (stride 1) or cover (stride 2), or a stride-2 one is
    not taken (``MAX_STRIDED_TAPS``, ``MIN_STRIDED_CHANNELS``, ``MIN_STRIDED_REGISTERS``)."""
    (hp, wp), (kh, kw), (oh, ow) = x_shape[2:], w_shape[2:], out_shape[2:]
    if strides == [1, 1]:
        return wp if (hp, wp) == (oh + kh - 1, ow + kw - 1) else None
    if strides == [2, 2] and kh * kw <= MAX_STRIDED_TAPS and w_shape[1] >= MIN_STRIDED_CHANNELS \
            and target.vector_registers >= MIN_STRIDED_REGISTERS:
        return -(-wp // 2) if ((hp - kh) // 2 + 1, (wp - kw) // 2 + 1) == (oh, ow) else None
    return None


def _candidates(module: ir.Module, target: CpuTarget):
    """(op, input type, filter type, output type, flat columns, pitch) of each
    convolution that the flat rows suit: f32, static, one image, dilation 1, stride 1
    or a stride-2 one of up to ``MAX_STRIDED_TAPS`` taps over ``MIN_STRIDED_CHANNELS``
    or more (``flat_pitch``)."""
    for op in linalg_ops(module):
        if op.name != "linalg.conv_2d_nchw_fchw" or len(op.results) != 1:
            continue
        types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
        if any(t is None or not is_f32(t) for t in types):
            continue
        strides, dilations = conv_params(op)
        x_t, w_t, out_t = types
        n, f, oh, ow = out_t.shape
        pitch = flat_pitch(x_t.shape, w_t.shape, out_t.shape, strides, target)
        if n != 1 or w_t.shape[3] == 1 or dilations != [1, 1] or pitch is None:
            continue
        if elementwise_consumer(op) is not None and _per_channel_consumer(op.results[0]) is None:
            continue  # a residual add: the row schedule's epilogue, not a pass of its own
        flat = flat_columns(oh, ow, pitch, f, target)
        if flat is not None:
            yield op, x_t, w_t, out_t, _peeled_length(flat[0], oh * pitch, strides, f, target), pitch


def _peeled_length(length: int, columns: int, strides, f: int, target: CpuTarget) -> int:
    """The flat row's length: a stride-2 one's ``columns`` exactly where its last partial
    register tile is peeled (``tiles.peeled_conv_columns``: ``conv.py`` computes it as a
    tile of its own), else ``length``, whole tiles. ResNet-50's 3x3/2 128 -> 128 from
    56x56 computes 812 columns, not 832."""
    return columns if strides == [2, 2] and peeled_conv_columns(columns, f, target) else length


def _window_rows(op, x_t, w_t, length: int, pitch: int):
    """Yield (flat input slice, filter slice) of each ``1 x T`` convolution over the flat rows
    that together make ``op``'s window: one per window row (stride 1), one per window
    row and column phase (stride 2: ``phase_planes``, taps ``j = b, b + 2, ...`` of
    plane ``(i % 2, b)`` at row offset ``i // 2``)."""
    tensor = _mlir.tensor
    _, c, hp, wp = x_t.shape
    f, _, kh, kw = w_t.shape
    f32 = x_t.element_type
    stride = conv_params(op)[0][0]
    if stride == 1:
        rows = math.ceil(((kh - 1) * pitch + length + kw - 1) / pitch)
        padded = _zero_padded(op.operands[0], x_t, rows - hp)
        flat = _regroup(padded, [1, c, 1, rows * pitch], f32)
        pieces = [(i * pitch, i, 0, kw) for i in range(kh)]
    else:
        rows = -(-hp // 2)
        plane = rows * pitch
        # The tail the last plane's taps read past it, whatever order the planes are in.
        tail = max(0, 3 * plane + (kh - 1) // 2 * pitch + length + (kw - 1) // 2 - 4 * plane)
        written = image_phase_planes(op.operands[0], rows, pitch, tail)
        if written is None:
            padded = _zero_padded(op.operands[0], x_t, 2 * rows - hp, 2 * pitch - wp)
            written = phase_planes(padded, (2, 2), rows, pitch, tail), lambda a, b: 2 * a + b
        planes, slot = written
        pieces = [(slot(i % 2, b) * plane + (i // 2) * pitch, i, b, len(range(b, kw, 2)))
                  for i in range(kh) for b in range(2)]
        size = static_tensor_type(planes).shape[2]
        flat = tensor.expand_shape(ir.RankedTensorType.get([1, c, 1, size], f32), planes,
                                   reassociation([[0], [1], [2, 3]]), [], [1, c, 1, size])
    for offset, i, b, taps in pieces:
        span = length + taps - 1
        row = tensor.extract_slice(ir.RankedTensorType.get([1, c, 1, span], f32), flat, [], [], [],
                                   [0, 0, 0, offset], [1, c, 1, span], [1, 1, 1, 1])
        weights = tensor.extract_slice(ir.RankedTensorType.get([f, c, 1, taps], f32), op.operands[1], [], [], [],
                                       [0, 0, i, b], [f, c, 1, taps], [1, 1, 1, stride])
        yield row, weights


def flat_row_convolutions(module: ir.Module, target: CpuTarget) -> int:
    """Rewrite the convolutions that gain (``flat_columns``) as accumulated ``1 x T``
    convolutions over flat rows (see above); returns how many were rewritten."""
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op, x_t, w_t, out_t, length, pitch in list(_candidates(module, target)):
        _, f, oh, ow = out_t.shape
        f32 = out_t.element_type
        with ir.InsertionPoint(op), op.location:
            init = _flat_init(op.operands[2], f, length, f32)
            if init is None:
                continue
            result = init
            for row, weights in _window_rows(op, x_t, w_t, length, pitch):
                result = linalg.conv_2d_nchw_fchw(row, weights, outs=[result], strides=[1, 1], dilations=[1, 1])
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


__all__ = ["MAX_STRIDED_TAPS", "MIN_SAVING", "MIN_STRIDED_CHANNELS", "MIN_STRIDED_REGISTERS", "flat_columns", "flat_pitch", "flat_row_convolutions"]
