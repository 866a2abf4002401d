"""A channel's max or sum pool as two passes: the window's rows, then its columns.

The max of a KH x KW window is the max over its KW columns of the max over its KH
rows, exactly (``maximumf`` is associative and commutative and propagates NaN; the
sign of zero is left open as ``windows._combine`` leaves it); a sum (average pooling)
adds the same terms grouped by column, within rounding. ``depthwise.py`` computed
a channel's 3x3/2 pool as nine taps per output over a copy of the plane: split by
column phase into a buffer filled with the pad value first, 114 x 114 floats for
ResNet-50's 112 x 112 planes (52 KB: more than the first-level cache), written twice
and read nine times. Here the vertical pass reads the channel's rows where they are
(whole vectors, no copy) into an ``[OH, W]`` plane, 25 KB, its padding columns filled
(a column or two, not the plane); the horizontal pass reads that plane's strided
columns (``strided_reads.py``: contiguous reads and a shuffle) and applies the
pool's epilogue (ReLU, BN, an average's division) in registers. Padded rows are
left out of the vertical taps (rows near the edges take fewer taps), so nothing is
copied to pad them. Measured (AVX-512, one thread, per-kernel profile medians of
interleaved runs): ResNet-50's stem pool after its convolution 0.27 -> 0.13 ms,
ShuffleNet's 0.081 -> 0.031 ms, Inception v2's 192x56x56 3x3/2 0.079 -> 0.044 ms,
SqueezeNet's 0.081 -> 0.071 ms; Inception v2's 3x3/1 average pools 0.62-0.68x.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import insert_at, slice_at, split_offsets
from ..linalg_queries import conv_params, producer, static_tensor_type
from .strided_reads import reads_contiguously
from .windows import POOLING, tap_slices, window_generic, window_of

LOWEST_F32 = -3.4028234663852886e38


def _neutral(kind: str, value) -> bool:
    """Whether ``value`` (a float, or a value: unknown) changes no max (the lowest
    float or -inf) or no sum (zero) of the taps: a pad or a start that can be left out."""
    if isinstance(value, ir.Value):
        owner = value.owner if isinstance(value, ir.OpResult) else None
        if owner is None or owner.name != "arith.constant":
            return False
        value = ir.FloatAttr(owner.attributes["value"]).value
    return value <= LOWEST_F32 if kind == "max" else value == 0.0


def takes_separable(op, pad, row_width: int) -> bool:
    """Whether the channel loop computes the pool ``op`` (over its input padded by
    ``pad``: low, high, value) in two passes: a window of more than 2x2 (DenseNet's 2x2/2
    average pools took 1.07x the time of one pass) started from a fill (of zero for a
    sum: each pass would add it), padded (if at all) with a value that changes no
    result, its columns strided by 1, or by 2 in output rows of at most ``row_width``
    read contiguously (``strided_reads.py``). Wider rows in pieces measured slower on
    AVX2 (ResNet-50's stem pool, 56 outputs a row: 1.4x the time of the column phases)
    and stay on those."""
    if op.name not in POOLING:
        return False
    kind = POOLING[op.name]
    low, high, value = pad
    kh, kw = window_of(op)
    (_, sw), _ = conv_params(op)
    ow = static_tensor_type(op.results[0]).shape[3]
    fill = producer(op.operands[2])
    if fill is None or fill.name != "linalg.fill" or kh * kw <= kh + kw:
        return False  # 1-D windows: one pass already; 2x2: as many taps in two passes as in one
    if any(low + high) and not _neutral(kind, value) or kind == "sum" and not _neutral(kind, fill.operands[0]):
        return False
    return sw == 1 or ow <= row_width and reads_contiguously(sw, ow)


def row_groups(out_rows: int, rows: int, kh: int, sh: int, dh: int, top: int) -> list:
    """Runs of output rows whose windows take the same input rows: (first output row,
    count, [the input row of each tap inside the input for the first one]); rows in
    the top / bottom padding are left out."""
    groups = []
    for o in range(out_rows):
        taps = tuple(i for i in range(kh) if 0 <= sh * o - top + dh * i < rows)
        if groups and groups[-1][3] == taps:
            groups[-1][1] += 1
        else:
            groups.append([o, 1, [sh * o - top + dh * i for i in taps], taps])
    return [(first, count, starts) for first, count, starts, _ in groups]


def _fill_columns(plane, first: int, count: int, value):
    """``plane`` with its columns ``[first, first + count)`` set to ``value``."""
    n, _, rows, _ = static_tensor_type(plane).shape
    columns = slice_at(plane, [0, 0, 0, first], [n, 1, rows, count])
    return insert_at(_mlir.linalg.fill(value, outs=[columns]), plane, [0, 0, 0, first])


def _vertical(op, source, channel, pad, out_rows: int, initial):
    """The first pass: the max (or sum) over the window's rows of channel ``channel`` of
    ``source``, ``[N, 1, OH, W']``: the input's columns, its padding columns (the pad's
    ``value``) on either side."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    low, _, value = pad
    n, _, h, w = static_tensor_type(source).shape
    element = static_tensor_type(source).element_type
    (kh, kw), (sh, sw), (dh, dw) = window_of(op), *conv_params(op)
    ow = static_tensor_type(op.results[0]).shape[3]
    left = low[3]
    width = max(left + w, sw * (ow - 1) + dw * (kw - 1) + 1)
    plane = tensor.empty([n, 1, out_rows, width], element)
    if width > w:  # padded columns (the value is a float: takes_separable)
        value = _mlir.arith.constant(element, value)
        plane = _fill_columns(plane, 0, left, value) if left else plane
        plane = _fill_columns(plane, left + w, width - left - w, value) if width > left + w else plane
    for first, count, starts in row_groups(out_rows, h, kh, sh, dh, low[2]):
        part_t = ir.RankedTensorType.get([n, 1, count, w], element)
        taps = []
        for row in starts:
            values, static = split_offsets([0, channel, row, 0])
            taps.append(tensor.extract_slice(part_t, source, values, [], [], static, [n, 1, count, w], [1, 1, sh, 1]))
        part = linalg.fill(initial, outs=[slice_at(plane, [0, 0, first, left], [n, 1, count, w])])
        if taps:
            part = window_generic(POOLING[op.name], taps, None, part)
        plane = insert_at(part, plane, [0, 0, first, left])
    return plane


def separable_pool(op, source, channel, pad, out, tail):
    """Channel ``channel`` of the pool ``op`` (max or sum) over ``source`` padded by ``pad``
    into ``out`` (see the module docstring), with ``tail`` (``window_generic``'s
    epilogue, or None)."""
    _, kw = window_of(op)
    (_, sw), (_, dw) = conv_params(op)
    initial = producer(op.operands[2]).operands[0]
    plane = _vertical(op, source, channel, pad, static_tensor_type(out).shape[2], initial)
    taps = tap_slices(plane, static_tensor_type(out).shape, (1, kw), (1, sw), (1, dw))
    return window_generic(POOLING[op.name], taps, None, _mlir.linalg.fill(initial, outs=[out]), tail)


__all__ = ["row_groups", "separable_pool", "takes_separable"]
