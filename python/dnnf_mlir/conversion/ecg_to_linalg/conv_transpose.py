"""ConvTranspose as convolutions, one per phase of the output (sub-pixel decomposition).

Along an axis of stride s and dilation d, output ``o`` of the full (uncropped) result
sums ``x[i] * w[t]`` over ``o = i * s + t * d``. The outputs of one phase (every s-th,
from ``r``) are reached by the taps with ``t * d = o (mod s)`` only, and are a
stride-1 convolution of the input (padded, or cropped) with those taps reversed,
dilated by ``d / gcd(s, d)`` (``axis_phases``). A transposed convolution is thus
``prod(strides)`` convolutions (``convolution.convolve``: the code generators' fast
kernels), none multiplying the zeros a zero-stuffed input holds (convolving the
zero-stuffed input measured 2 to 8 times slower); a phase without taps (a kernel
smaller than the stride), or whose taps reach only the padding, is zeros. One
gather generic interleaves the phases' results into the output (``_assemble``):
written into the output's strided positions one phase at a time, they were strided
stores, one scalar per element (a 2x2 stride-2 up-sampling ran 1.4x slower). The
weights (C, M/G, *kernel) are transposed once to (M, C/G, *kernel); each phase
slices its taps and reverses those of more than one.
"""

from dataclasses import dataclass
from itertools import product
from math import ceil, gcd, prod

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, element_of, generic
from .builders import (
    add, elementwise, empty, extract_slice, identity_map, pad, reshape, shape_of, tensor_type, transpose, zeros,
)
from .convolution import convolve
from .gathers import AxisReads, table_gather
from .registry import lowers


@dataclass(frozen=True)
class Phase:
    """The outputs ``start, start + stride, ...`` (``count`` of them) of one axis: a
    convolution with the taps ``first_tap, first_tap + tap_step, ...`` (``taps`` of
    them, none when the phase gets no contribution) reversed and dilated by
    ``dilation``, over the input padded by ``low`` and ``high`` (negative: cropped)."""

    start: int
    count: int
    taps: int
    first_tap: int = 0
    tap_step: int = 1
    dilation: int = 1
    low: int = 0
    high: int = 0


def axis_phases(in_len: int, kernel: int, stride: int, dilation: int, begin: int, out_len: int) -> list:
    """The ``stride`` phases of an axis whose full result is cropped to
    ``[begin, begin + out_len)``, each computing ``ceil(out_len / stride)`` outputs
    (the last of a shorter phase is never read)."""
    common = gcd(stride, dilation)
    tap_step, tap_dilation = stride // common, dilation // common
    count = ceil(out_len / stride)
    phases = []
    for start in range(stride):
        # Output start + stride * q is full index stride * (q + shift) + residue.
        shift, residue = divmod(begin + start, stride)
        taps = [t for t in range(kernel) if t * dilation % stride == residue] if start < out_len else []
        if not taps:
            phases.append(Phase(start, count, 0))
            continue
        # Tap t reads input q + shift - (t * dilation - residue) / stride.
        low = (taps[-1] * dilation - residue) // stride - shift
        high = count + (len(taps) - 1) * tap_dilation - in_len - low
        phases.append(Phase(start, count, len(taps), taps[0], tap_step, tap_dilation, low, high))
    return phases


def _pad_or_crop(x, lows, highs):
    """``x`` with its spatial axes padded with zeros (or cropped, for negative
    amounts); None when nothing of ``x`` is left (the phase reads only padding)."""
    shape = shape_of(x)
    crop_low = [max(0, -v) for v in lows]
    kept = [d - max(0, -lo) - max(0, -hi) for d, lo, hi in zip(shape[2:], lows, highs)]
    if min(kept) <= 0:
        return None
    if any(crop_low) or kept != list(shape[2:]):
        x = extract_slice(x, [0, 0] + crop_low, list(shape[:2]) + kept)
    return pad(x, [0, 0] + [max(0, v) for v in lows], [0, 0] + [max(0, v) for v in highs], 0.0)


def _phase_weights(weights, phases):
    """The taps of one phase combination from the (M, C/G, *kernel) weights, reversed
    (a single tap is sliced with step 1: a strided view of one element is a layout
    bufferization cannot reshape)."""
    m, cg = shape_of(weights)[:2]
    taps = extract_slice(weights, [0, 0] + [p.first_tap for p in phases], [m, cg] + [p.taps for p in phases],
                         [1, 1] + [p.tap_step if p.taps > 1 else 1 for p in phases])
    if all(p.taps == 1 for p in phases):
        return taps
    rank = 2 + len(phases)
    reversed_map = affine_map(rank, [0, 1] + [
        ir.AffineConstantExpr.get(p.taps - 1) - ir.AffineDimExpr.get(2 + a) if p.taps > 1 else 2 + a
        for a, p in enumerate(phases)
    ])
    init = empty(shape_of(taps), element_of(taps))
    return generic([taps], [reversed_map, identity_map(rank)], [init], lambda value, _: value)[0]


def _assemble(parts: list, strides, out_shape):
    """The output from its phases' results (each ``(N, M, *counts)``, in the order of
    ``product`` over the axes' phases): one gather generic over the output reading
    them stacked, at offsets tabled per strided axis (``gathers.table_gather``)."""
    stacked = _mlir.tensor.concat(
        tensor_type((len(parts),) + shape_of(parts[0]), element_of(parts[0])), 0,
        [reshape(part, (1,) + shape_of(part)) for part in parts])
    shape = shape_of(stacked)
    layout = [prod(shape[d + 1:]) for d in range(len(shape))]  # the stack's strides
    phase_stride = layout[0]
    reads = {}
    for axis in reversed(range(2, len(out_shape))):
        stride = strides[axis - 2]
        if stride > 1:
            o = np.arange(out_shape[axis])
            reads[axis] = AxisReads(((o % stride) * phase_stride + (o // stride) * layout[axis + 1])[None, :])
        phase_stride *= stride
    return table_gather(stacked, list(out_shape), layout[1:], reads)


@lowers("conv_transpose")
def lower_conv_transpose(op, args):
    """One convolution per phase combination of the spatial axes (``axis_phases``),
    assembled into the output (``_assemble``), then the bias added."""
    attrs = op.attrs
    x, w = args[:2]
    specs = op.operand_specs
    (spec,) = op.result_specs
    channels = specs[0].shape[1]
    in_sizes, kernel = specs[0].shape[2:], specs[1].shape[2:]
    group, features = attrs["group"], spec.shape[1]
    element = element_of(x)
    begins, outs = type(op).geometry(specs, attrs)
    strides = [int(s) for s in attrs["strides"]]
    axes = [
        axis_phases(size, k, s, int(d), b, o)
        for size, k, s, d, b, o in zip(in_sizes, kernel, strides, attrs["dilations"], begins, outs)
    ]
    # (C, M/G, *k) -> (M, C/G, *k): each group's input and output channels swapped.
    weights = reshape(w, (group, channels // group, features // group) + tuple(kernel))
    weights = reshape(transpose(weights, [0, 2, 1] + list(range(3, 3 + len(kernel)))),
                      (features, channels // group) + tuple(kernel))
    parts = []
    for phases in product(*axes):
        counts = (spec.shape[0], features) + tuple(p.count for p in phases)
        taps = all(p.taps for p in phases)
        source = _pad_or_crop(x, [p.low for p in phases], [p.high for p in phases]) if taps else None
        if source is None:
            parts.append(zeros(counts, element))
            continue
        parts.append(convolve(source, _phase_weights(weights, phases), [1] * len(phases),
                              [p.dilation for p in phases], group))
    y = parts[0] if len(parts) == 1 else _assemble(parts, strides, spec.shape)
    if len(args) == 3:
        bias = reshape(args[2], (features,) + (1,) * len(kernel))
        y = elementwise([y, bias], spec.shape, element, add)
    return [y]


__all__ = ["Phase", "axis_phases", "lower_conv_transpose"]
