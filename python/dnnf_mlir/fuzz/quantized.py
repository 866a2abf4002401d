"""Quantization op families, in the QDQ form onnxruntime's quantizer writes:
QuantizeLinear -> DequantizeLinear pairs (per tensor or per axis, int8 or uint8, with
zero points), and contractions whose weights are int8 constants dequantized per
output channel.

A pair rounds, so it reads graph inputs only (as the discontinuous ops do), with
power-of-two scales: x / scale is then exact whether an implementation divides or
multiplies by the reciprocal, and only a value exactly halfway between two steps
could round differently, which normal inputs do not draw.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .compute import MAX_MACS, matmul_shape
from .draws import DIMS, MAX_NUMEL, axis, pick
from .elementwise import exact
from .graph import FLOAT, GraphBuilder

QUANTIZED = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def qdq(draw, g: GraphBuilder) -> None:
    x = pick(draw, g, exact)
    dtype = draw(st.sampled_from(sorted(QUANTIZED, key=str)))
    low, high = QUANTIZED[dtype]
    per_axis = draw(st.booleans())
    a = axis(draw, x.rank)
    shape = (x.shape[a],) if per_axis else ()
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # Steps of x.scale / 8 to x.scale / 64: the range covers a few standard deviations, so some saturate.
    scale = np.exp2(np.round(np.log2(x.scale)) - rng.integers(3, 7, shape)).astype(FLOAT)
    middle = (low + high + 1) // 2
    zero_point = rng.integers(middle - 16, middle + 16, shape).astype(dtype)
    attrs = {"axis": a} if per_axis else {}
    q = g.one("QuantizeLinear", [x, g.constant(scale), g.constant(zero_point)], x.shape, dtype, **attrs)
    g.one("DequantizeLinear", [q, g.constant(scale), g.constant(zero_point)], x.shape, scale=x.scale, **attrs)


def dequantized_weights(draw, g: GraphBuilder, shape: tuple, channel_axis: int, fan_in: int) -> str:
    """int8 weights of ``shape``, a zero point of 0 and a scale per output channel
    (``channel_axis``), dequantized: the RMS of the product is 1/sqrt(fan_in)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    values = rng.integers(-127, 128, shape).astype(np.int8)
    channels = shape[channel_axis]
    scale = (rng.uniform(0.5, 1.5, channels) / (73.0 * math.sqrt(fan_in))).astype(FLOAT)  # 73: the RMS of the int8s
    inputs = [g.constant(values), g.constant(scale), g.constant(np.zeros(channels, np.int8))]
    return g.one("DequantizeLinear", inputs, shape, scale=1 / math.sqrt(fan_in), axis=channel_axis).name


def quantized_contraction(draw, g: GraphBuilder) -> None:
    """A MatMul or a 1x1 / 3x3 Conv whose weights are dequantized int8s."""
    x = pick(draw, g)
    if x.rank == 4 and x.shape[1] <= 64 and draw(st.booleans()):
        n, c, h, w = x.shape
        k = draw(st.sampled_from((1, 3))) if min(h, w) >= 3 else 1
        m = draw(st.sampled_from((4, 8, 16)))
        while m > 1 and (n * m * h * w > MAX_NUMEL or n * m * h * w * c * k * k > MAX_MACS):
            m //= 2
        if n * h * w * c * k * k > MAX_MACS:
            k = 1
        weights = dequantized_weights(draw, g, (m, c, k, k), 0, c * k * k)
        g.one("Conv", [x, weights], (n, m, h, w), scale=x.scale, kernel_shape=[k, k], pads=[k // 2] * 4)
        return
    k = x.shape[-1]
    n = draw(st.sampled_from([d for d in DIMS[:8] if x.numel // k * d <= MAX_NUMEL] or [1]))
    weights = dequantized_weights(draw, g, (k, n), 1, k)
    g.one("MatMul", [x, weights], matmul_shape(x.shape, (k, n)), scale=x.scale)


FAMILIES = {"qdq": qdq, "quantized_contraction": quantized_contraction}

__all__ = ["FAMILIES", "QUANTIZED"]
