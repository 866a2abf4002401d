"""Numpy implementations behind the reference semantics of the windowed ECG ops.

The callers (``ops/convolution.py``, ``ops/pooling.py``) validate shapes and
resolve padding first: every kernel here takes explicit per-dimension begin/end
pads and output sizes, works on N-d spatial layouts (N, C, *spatial) and loops
only over kernel offsets, so each step is one strided numpy slice over the whole
tensor. Convolution is im2col + one batched ``np.matmul`` (BLAS), which keeps
whole CNNs fast enough for the reference interpreter.
"""

from math import prod
from typing import Sequence

import numpy as np

from .shapes import reachable_kernel, window_extra_end
from .tensor_spec import compute_dtype, element_kind

_ALL = slice(None)


def _window(offset: int, dilation: int, stride: int, count: int) -> slice:
    """The input positions kernel ``offset`` reads for ``count`` outputs."""
    start = offset * dilation
    return slice(start, start + stride * (count - 1) + 1, stride)


def _pad(x: np.ndarray, begins: Sequence[int], ends: Sequence[int], value) -> np.ndarray:
    """Pad the spatial dimensions (all but the first two) with ``value``."""
    if not any(begins) and not any(ends):
        return x
    shape = x.shape[:2] + tuple(n + b + e for n, b, e in zip(x.shape[2:], begins, ends))
    padded = np.full(shape, value, dtype=x.dtype)
    padded[(_ALL, _ALL) + tuple(slice(b, b + n) for b, n in zip(begins, x.shape[2:]))] = x
    return padded


def conv(x, w, bias, begins, ends, strides, dilations, group, out_sizes) -> np.ndarray:
    """N-d grouped convolution (cross-correlation, as in ONNX Conv) via im2col."""
    dtype = x.dtype
    ctype = compute_dtype(dtype)
    x, w = x.astype(ctype, copy=False), w.astype(ctype, copy=False)
    n, c = x.shape[:2]
    m = w.shape[0]
    kernel = w.shape[2:]
    cg, mg = c // group, m // group
    positions = prod(out_sizes)
    taps = prod(kernel)
    xp = _pad(x, begins, ends, 0)
    if taps == 1 and all(s == 1 for s in strides) and tuple(xp.shape[2:]) == tuple(out_sizes):
        cols = xp.reshape(n, group, cg, positions)
    else:
        cols = np.empty((n, group, cg, *kernel, *out_sizes), dtype=ctype)
        source_shape = (n, group, cg, *out_sizes)
        for offset in np.ndindex(*kernel):
            window = tuple(_window(o, d, s, size) for o, d, s, size in zip(offset, dilations, strides, out_sizes))
            cols[(_ALL, _ALL, _ALL) + offset] = xp[(_ALL, _ALL) + window].reshape(source_shape)
        cols = cols.reshape(n, group, cg * taps, positions)
    if group == 1:
        y = np.matmul(w.reshape(m, cg * taps), cols.reshape(n, cg * taps, positions))
    else:
        y = np.matmul(w.reshape(group, mg, cg * taps), cols)  # (n, group, mg, positions)
    y = y.reshape(n, m, *out_sizes)
    if bias is not None:
        y += bias.astype(ctype, copy=False).reshape((1, m) + (1,) * len(out_sizes))
    return y.astype(dtype, copy=False)


def conv_transpose(x, w, bias, begins, strides, dilations, group, out_sizes) -> np.ndarray:
    """N-d grouped transposed convolution: a matmul to columns, then col2im with scatter-adds.

    ``w`` is (C, M/group, *kernel); the full (uncropped) result is cropped from
    ``begins`` to ``out_sizes`` (zero-extended where ``out_sizes`` reach past it).
    """
    dtype = x.dtype
    ctype = compute_dtype(dtype)
    x, w = x.astype(ctype, copy=False), w.astype(ctype, copy=False)
    n, c = x.shape[:2]
    in_sizes = x.shape[2:]
    mg = w.shape[1]
    kernel = w.shape[2:]
    cg = c // group
    m = mg * group
    taps = prod(kernel)
    # (group, mg*taps, cg) @ (n, group, cg, positions) -> (n, group, mg*taps, positions)
    weights = w.reshape(group, cg, mg * taps).transpose(0, 2, 1)
    cols = np.matmul(weights, x.reshape(n, group, cg, prod(in_sizes)))
    cols = cols.reshape(n, group, mg, *kernel, *in_sizes)
    full = [(i - 1) * s + (k - 1) * d + 1 for i, s, k, d in zip(in_sizes, strides, kernel, dilations)]
    extent = [max(f, b + o) for f, b, o in zip(full, begins, out_sizes)]
    buffer = np.zeros((n, group, mg, *extent), dtype=ctype)
    for offset in np.ndindex(*kernel):
        window = tuple(_window(o, d, s, size) for o, d, s, size in zip(offset, dilations, strides, in_sizes))
        buffer[(_ALL, _ALL, _ALL) + window] += cols[(_ALL, _ALL, _ALL) + offset]
    crop = tuple(slice(b, b + o) for b, o in zip(begins, out_sizes))
    y = buffer[(_ALL, _ALL, _ALL) + crop].reshape(n, m, *out_sizes)
    if bias is not None:
        y = y + bias.astype(ctype, copy=False).reshape((1, m) + (1,) * len(out_sizes))
    return y.astype(dtype, copy=False)


def max_pool(x, kernel, begins, ends, strides, dilations, out_sizes) -> np.ndarray:
    """Max over each window; padding never wins (it is the lowest value of the type)."""
    lowest = -np.inf if element_kind(x.dtype) == "f" else np.iinfo(x.dtype).min
    kernel = reachable_kernel(x.shape[2:], begins, ends, kernel, dilations)
    extra = window_extra_end(x.shape[2:], begins, ends, kernel, strides, dilations, out_sizes)
    xp = _pad(x, begins, [e + a for e, a in zip(ends, extra)], lowest)
    y = None
    for offset in np.ndindex(*kernel):
        window = tuple(_window(o, d, s, size) for o, d, s, size in zip(offset, dilations, strides, out_sizes))
        tap = xp[(_ALL, _ALL) + window]
        y = tap.copy() if y is None else np.maximum(y, tap, out=y)
    return y


def average_pool(x, kernel, begins, ends, strides, dilations, out_sizes, count_include_pad) -> np.ndarray:
    """Mean over each window.

    The divisor counts the window's elements inside the input, or (with
    ``count_include_pad``) inside the explicitly padded input; positions the
    ceil mode adds past the padding are never counted.
    """
    dtype = x.dtype
    ctype = compute_dtype(dtype)
    in_sizes = x.shape[2:]
    kernel = reachable_kernel(in_sizes, begins, ends, kernel, dilations)
    extra = window_extra_end(in_sizes, begins, ends, kernel, strides, dilations, out_sizes)
    xp = _pad(x.astype(ctype, copy=False), begins, [e + a for e, a in zip(ends, extra)], 0)
    total = np.zeros(x.shape[:2] + tuple(out_sizes), dtype=ctype)
    for offset in np.ndindex(*kernel):
        window = tuple(_window(o, d, s, size) for o, d, s, size in zip(offset, dilations, strides, out_sizes))
        total += xp[(_ALL, _ALL) + window]
    # The divisor is separable: a product of per-dimension counts.
    divisor = np.ones((), dtype=ctype)
    for dim, (n, b, e, a, k, s, d, o) in enumerate(
        zip(in_sizes, begins, ends, extra, kernel, strides, dilations, out_sizes)
    ):
        valid = np.zeros(b + n + e + a, dtype=ctype)
        if count_include_pad:
            valid[: b + n + e] = 1
        else:
            valid[b : b + n] = 1
        counts = sum(valid[_window(t, d, s, o)] for t in range(k))
        shape = [1] * len(out_sizes)
        shape[dim] = o
        divisor = divisor * counts.reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = total / divisor
    return y.astype(dtype, copy=False)


def lrn(x, size, alpha, beta, bias) -> np.ndarray:
    """Local response normalization across channels (axis 1)."""
    dtype = x.dtype
    x = x.astype(compute_dtype(dtype), copy=False)
    square = np.square(x)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    widths = [(0, 0), (before, after)] + [(0, 0)] * (x.ndim - 2)
    padded = np.pad(square, widths)
    channels = x.shape[1]
    square_sum = sum(padded[:, i : i + channels] for i in range(size))
    y = x / np.power(bias + (alpha / size) * square_sum, beta)
    return y.astype(dtype, copy=False)
