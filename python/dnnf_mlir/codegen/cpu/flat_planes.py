"""Depthwise convolutions over planes narrower than a vector, each plane one flat row.

As a whole-tensor window (``windows.py``), a depthwise convolution's generic is
vectorized along the output rows: on EfficientNet's 7x7 planes (a 96x96 input's 3x3
and 6x6, MobileNetV2's too), a row is 7 of 16 lanes, and each tap's load of 7
elements is four instructions (4 + 2 + 1 and an insert), so that 1152 channels of 7x7
with a 5x5 kernel took 2.6x onnxruntime's time. ``flat_plane_taps`` computes each
channel's output as one row instead: over the zero-padded input ``[N, C, HP, WP]``,
collapsed to ``[N, C, HP * WP]`` (a view), tap (i, j) of output ``(oh, ow)`` is
element ``(oh + dh*i) * WP + ow + dw*j``, so over the output laid out with the input's
pitch, ``[N, C, OH * WP]``, every tap is a contiguous slice at offset ``dh*i*WP +
dw*j``::

    y[n, c, k] = sum over (i, j) of x_flat[n, c, k + dh*i*WP + dw*j] * w[c, i, j]

whose columns ``ow >= OW`` of each output row are computed and dropped (a slice of
the result viewed as ``[N, C, OH, WP]``). The row is rounded up to whole vectors and
computed as ``[N, C, V, lanes]``, a vector per step, no masks: 7x7 with a 5x5 kernel
(``WP`` = 11) is five vectors a channel where its rows were seven of half a vector.
The pad gets zero rows at the bottom for the dropped columns that would read past
the plane. A 5x5 window's 25 multiply-adds are split into ``CHAINS`` independent
chains. The convolution's element-wise consumer (bias, ReLU6, SiLU; not one that
varies over the plane, a residual) is computed in the same generic on the same
vectors, then the dropped columns are sliced off once, except an expensive one (SiLU)
after a window of more than ``MAX_TAPS_WITH_EXPENSIVE`` taps, computed apart on the
output copied out of the flat rows (its rows then merge: ``narrow_rows.py``).

An input read in place (not padded: MobileNetV2's, padded by the kernel before) is
copied into a pad when the flat rows read past it; for rows over half a vector that
copy costs more than the whole vectors save (192 channels of 14x14 into 12x12,
3x3: 0.0076 ms as rows, 0.0127 ms as flat rows; 384 of 8x8 into 6x6: 0.0074 ms,
0.0065 ms), and they stay rows.

Measured (AVX-512, one thread, against onnxruntime, each with its consumer): 1152
channels of 7x7, 5x5 + SiLU from 3.3x to 1.7x onnxruntime's time, 3x3 + SiLU 2.6x
to 1.3x; 672 of 6x6, 5x5 + SiLU 3.0x to 1.6x; 960 of 7x7, 3x3 + ReLU6 1.25x to 0.83x.

A window of stride 2 reads the padded input split once into its four phase planes
(``(a, b)``: rows ``2*r + a``, columns ``2*q + b``), each ``[HP/2, WP/2]``, laid one
after the other in each channel's flat row with a zeroed tail the last plane's taps
read past: tap (i, j) is then the contiguous slice of plane ``(dh*i % 2, dw*j % 2)`` at
``(dh*i // 2) * WP/2 + dw*j // 2``, over the output with the planes' pitch ``WP/2``,
where the whole-tensor taps load a lane at a time. Measured (AVX-512, one thread, in
context): DeepLab's 72 channels 23x23 -> 12x12, 5x5/2, 0.039 -> 0.017 ms. The copy
pays for 5x5 windows on rows over half a vector only (see ``STRIDES``).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import generic, make_pad
from ..linalg_queries import (conv_params, elementwise_consumer, indexing_maps, is_f32, linalg_inputs, linalg_ops,
                              producer, reassociation, static_tensor_type)
from .depthwise import filled, static_pad
from .windows import DEPTHWISE, replace_window, taken_epilogue, window_generic

# Independent chains of multiply-adds per vector: a flat row is a few vectors, each
# waiting on 25 dependent multiply-adds of a 5x5 window as one chain. Measured
# (AVX-512, one thread, against onnxruntime, SiLU in the generic): 1152 channels of
# 7x7, 5x5: 2.61x (one chain), 1.99x (two), 1.90x (four); of 3x3, 5x5: 2.85x, 2.06x, 1.93x.
CHAINS = 4
# Windows of more taps leave an expensive consumer (SiLU) apart, on the output copied
# out of the flat rows: with the taps' weights and partial sums, its constants no
# longer fit the registers. Measured as above: 672 channels of 6x6, 5x5: 1.80x in
# the generic, 1.56x apart; 1152 of 7x7, 5x5: 1.88x, 1.70x; 1152 of 3x3, 3x3: 0.86x, 1.15x.
MAX_TAPS_WITH_EXPENSIVE = 9
# Strides taken: a strided window reads its input split into phase planes, a copy that
# pays for windows of more than MAX_TAPS_WITH_EXPENSIVE taps on rows over half a vector
# wide only. Measured in EfficientNet and MobileNetV2 (AVX-512, one thread, their inputs
# padded by the kernel before): 144 channels 27x27 -> 12x12, 5x5/2: 0.071 -> 0.046 ms;
# but 672 of 9x9 -> 3x3, 5x5/2: 0.023 -> 0.029 ms; 240 of 13x13 -> 6x6, 3x3/2: 0.008 ->
# 0.021 ms; 144 of 25x25 -> 12x12, 3x3/2: 0.021 -> 0.032 ms (per-lane loads of a few
# taps cost less than the pad and the split). AVX2 (rows of 5 to 7 of 8 lanes, alone):
# 480 of 13x13 -> 7x7, 5x5/2 + SiLU 0.105 -> 0.074 ms; 240 of 12x12 -> 6x6 + ReLU6 0.033
# -> 0.021 ms; 144 of 9x9 -> 5x5 0.015 -> 0.010 ms.
STRIDES = ((1, 1), (2, 2))


def _plane_epilogue(op):
    """The element-wise consumer of ``op`` whose other operands are the same for every
    element of a plane (a bias: they read dims 0 and 1 only), else None."""
    consumer = elementwise_consumer(op)
    if consumer is None:
        return None
    for value, amap in zip(linalg_inputs(consumer), indexing_maps(consumer)):
        positions = {ir.AffineDimExpr(e).position for e in amap.results if isinstance(e, ir.AffineDimExpr)}
        if value != op.results[0] and positions - {0, 1}:
            return None
    return consumer


def _flat_row(op, pitch: int, lanes: int) -> tuple:
    """(vectors, rows): the whole vectors of a flat output row of ``pitch`` (the input's,
    or a phase plane's) and the rows of that pitch each plane needs for its taps."""
    oh = static_tensor_type(op.results[0]).shape[2]
    _, kh, kw = static_tensor_type(op.operands[1]).shape
    (sh, sw), (dh, dw) = conv_params(op)
    vectors = -(-oh * pitch // lanes)
    return vectors, -(-((dh * (kh - 1) // sh) * pitch + dw * (kw - 1) // sw + vectors * lanes) // pitch)


def phase_planes(padded, strides, rows: int, pitch: int, tail: int):
    """``padded`` (``[N, C, sh * rows, sw * pitch]``) split into its ``sh * sw`` phase
    planes, flat: ``[N, C, sh * sw * rows * pitch + tail]``, element ``(sh*r + a, sw*q +
    b)`` of a channel at ``((a * sw + b) * rows + r) * pitch + q``, then ``tail`` zeros
    that the last plane's taps read past it (into dropped columns). One transposing
    generic whose vectors take whole ``[sw, pitch]`` tiles of an input row
    (``rows.short_transposed_dim``) writes the planes."""
    tensor = _mlir.tensor
    n, c = static_tensor_type(padded).shape[:2]
    (sh, sw), f32 = strides, static_tensor_type(padded).element_type
    size = sh * sw * rows * pitch
    view = tensor.expand_shape(ir.RankedTensorType.get([n, c, rows, sh, pitch, sw], f32), padded,
                               reassociation([[0], [1], [2, 3], [4, 5]]), [], [n, c, rows, sh, pitch, sw])
    buffer = tensor.empty([n, c, size + tail], f32)
    if tail:
        zeros = filled([n, c, tail], 0.0, f32)
        buffer = tensor.insert_slice(zeros, buffer, [], [], [], [0, 0, size], [n, c, tail], [1, 1, 1])
    planes_t = ir.RankedTensorType.get([n, c, sh, sw, rows, pitch], f32)
    into = tensor.expand_shape(planes_t, tensor.extract_slice(ir.RankedTensorType.get([n, c, size], f32), buffer, [], [], [],
                                                              [0, 0, 0], [n, c, size], [1, 1, 1]),
                               reassociation([[0], [1], [2, 3, 4, 5]]), [], [n, c, sh, sw, rows, pitch])
    d = [ir.AffineDimExpr.get(k) for k in range(6)]
    read = ir.AffineMap.get(6, 0, [d[0], d[1], d[4], d[2], d[5], d[3]])
    planes = generic([view], [read, ir.AffineMap.get_identity(6)], [into], lambda value, _: value)[0]
    flat = tensor.collapse_shape(ir.RankedTensorType.get([n, c, size], f32), planes, reassociation([[0], [1], [2, 3, 4, 5]]))
    return tensor.insert_slice(flat, buffer, [], [], [], [0, 0, 0], [n, c, size], [1, 1, 1])


def _flat_taps(op, epilogue, lanes: int, copied: bool = False):
    """The rewrite of one depthwise convolution (and its ``epilogue``, or None): the
    output ``[N, C, OH, OW]`` sliced from the flat rows (see the module docstring),
    ``copied`` into a tensor of its own for an element-wise consumer left apart (whose
    rows then merge: ``narrow_rows.py``)."""
    tensor, arith = _mlir.tensor, _mlir.arith
    source, low, high, value = static_pad(op)
    n, c, h, w = static_tensor_type(source).shape
    out_t = static_tensor_type(op.results[0])
    _, _, oh, ow = out_t.shape
    _, kh, kw = static_tensor_type(op.operands[1]).shape
    (sh, sw), (dh, dw) = conv_params(op)
    f32 = out_t.element_type
    pitch = -(-(w + low[3] + high[3]) // sw)
    vectors, rows = _flat_row(op, pitch, lanes)
    length = vectors * lanes
    strided = (sh, sw) != (1, 1)
    rows = max(0 if strided else rows, -(-(h + low[2] + high[2]) // sh))  # strided: a tail after the planes instead
    plane = rows * pitch

    def offset(i, j):
        r, q = dh * i, dw * j
        return ((r % sh) * sw + q % sw) * plane + (r // sh) * pitch + q // sw

    high = high[:2] + [sh * rows - h - low[2], sw * pitch - w - low[3]]
    if not isinstance(value, ir.Value):
        value = arith.constant(f32, value)
    padded = make_pad(source, low, high, value) if any(low + high) else source
    if strided:
        past = max(offset(i, j) for i in range(kh) for j in range(kw)) + length - sh * sw * plane
        flat = phase_planes(padded, (sh, sw), rows, pitch, max(0, past))
    else:
        flat = tensor.collapse_shape(ir.RankedTensorType.get([n, c, plane], f32), padded, reassociation([[0], [1], [2, 3]]))
    row_t, tile_t = ir.RankedTensorType.get([n, c, length], f32), ir.RankedTensorType.get([n, c, vectors, lanes], f32)
    split = reassociation([[0], [1], [2, 3]])
    taps = [tensor.expand_shape(tile_t, tensor.extract_slice(row_t, flat, [], [], [], [0, 0, offset(i, j)],
                                                             [n, c, length], [1, 1, 1]), split, [], [n, c, vectors, lanes])
            for i in range(kh) for j in range(kw)]
    fill = producer(op.operands[2])
    init = filled([n, c, vectors, lanes], fill.operands[0], f32)
    tail = None
    if epilogue is not None:
        operands = [(None if v == op.results[0] else v, m) for v, m in zip(linalg_inputs(epilogue), indexing_maps(epilogue))]
        tail = epilogue.regions[0].blocks[0], operands, tensor.empty([n, c, vectors, lanes], f32)
    y = tensor.collapse_shape(row_t, window_generic("sum", taps, op.operands[1], init, tail, chains=CHAINS), split)
    used = [n, c, oh * pitch]
    y = tensor.extract_slice(ir.RankedTensorType.get(used, f32), y, [], [], [], [0, 0, 0], used, [1, 1, 1])
    grid = tensor.expand_shape(ir.RankedTensorType.get([n, c, oh, pitch], f32), y, split, [], [n, c, oh, pitch])
    y = tensor.extract_slice(out_t, grid, [], [], [], [0, 0, 0, 0], [n, c, oh, ow], [1, 1, 1, 1])
    return _mlir.linalg.copy(y, outs=[tensor.empty([n, c, oh, ow], f32)]) if copied else y


def flat_plane_taps(module: ir.Module, lanes: int) -> int:
    """Rewrite every f32 static depthwise convolution of stride 1, its accumulator a
    fill, whose output rows are narrower than a vector (``lanes`` f32), see the module
    docstring. Returns how many were rewritten."""
    count = 0
    for op in linalg_ops(module):
        if op.name != DEPTHWISE or len(op.results) != 1:
            continue
        types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
        if any(t is None or not is_f32(t) for t in types) or types[2].shape[3] >= lanes:
            continue
        fill = producer(op.operands[2])
        strides = tuple(conv_params(op)[0])
        if strides not in STRIDES or fill is None or fill.name != "linalg.fill":
            continue
        taps = math.prod(types[1].shape[1:])
        if strides != (1, 1) and (taps <= MAX_TAPS_WITH_EXPENSIVE or 2 * types[2].shape[3] <= lanes):
            continue
        x = types[0].shape
        in_place = static_pad(op)[0] == op.operands[0] and strides == (1, 1)
        if in_place and _flat_row(op, x[3], lanes)[1] > x[2] and 2 * types[2].shape[3] > lanes:
            continue  # the rows would need a padded copy of an input read in place: not for rows over half a vector
        epilogue = _plane_epilogue(op)
        apart = epilogue is not None and taken_epilogue(op) is None and taps > MAX_TAPS_WITH_EXPENSIVE
        if apart:
            epilogue = None
        replace_window(op, epilogue, lambda: _flat_taps(op, epilogue, lanes, apart))
        count += 1
    return count


__all__ = ["flat_plane_taps", "phase_planes"]
