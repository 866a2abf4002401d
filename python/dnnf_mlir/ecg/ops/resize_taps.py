"""Where each output element of a Resize reads, and with which weights: one axis at a time.

Every Resize mode is separable: along one axis, output index ``o`` is the weighted
sum of a few input elements (its *taps*), ``sum_t weights[o, t] * x[indices[o, t]]``,
and a resize of several axes applies the axes one after another. Nearest has one
tap of weight 1, linear two, cubic four, and an antialiased (down-sampling) filter
as many as its widened support covers. These tables are the one definition of what
a Resize computes: the reference interpreter (``ResizeOp.reference``) applies them
with numpy and convert-ecg-to-linalg bakes them into the code as constants, so the
two cannot disagree. Coordinates follow onnxruntime's f32 arithmetic; indices are
clamped into the input (the edge replicated), except where ``exclude_outside``
drops the outside taps and renormalizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

F32 = np.float32
# onnxruntime's antialiasing filters have this support (in input elements, before the
# widening by 1/scale) per mode.
ANTIALIAS_SUPPORT = {"linear": 2.0, "cubic": 4.0}
# How far from a half onnxruntime's nearest rounding still takes a coordinate for a tie
# (measured: 2^-20 off is a tie, 1.01e-6 is not).
NEAREST_TIE_TOLERANCE = F32(1e-6)


@dataclass(frozen=True)
class AxisTaps:
    """The taps of one resized axis: output ``o`` reads ``indices[o, t]`` with
    ``weights[o, t]``; ``inside[o]`` is False where tf_crop_and_resize samples outside
    the input, whose output is the extrapolation value."""

    indices: np.ndarray  # (out, taps) int64, within [0, in)
    weights: Optional[np.ndarray]  # (out, taps) float64; None: nearest, one tap of weight 1
    inside: Optional[np.ndarray]  # (out,) bool; None: every output inside

    @property
    def count(self) -> int:
        return self.indices.shape[1]


def coordinates(out_len: int, in_len: int, scale, transform: str, roi=(0.0, 1.0)) -> np.ndarray:
    """The input coordinate of each output index, in f32 as onnxruntime computes it."""
    i = np.arange(out_len, dtype=F32)
    scale, half = F32(scale), F32(0.5)
    if transform == "asymmetric":
        return i / scale
    if transform == "align_corners":
        if out_len == 1:
            return np.zeros(1, F32)
        return i * F32(in_len - 1) / F32(out_len - 1)
    if transform == "tf_crop_and_resize":
        start, end = F32(roi[0]), F32(roi[1])
        if out_len == 1:  # onnxruntime's 0.5 * (start + end) * (in - 1): the sum in f32, the rest in double
            return np.array([0.5 * np.float64(start + end) * (in_len - 1)], F32)
        return start * F32(in_len - 1) + i * (end - start) * F32(in_len - 1) / F32(out_len - 1)
    if transform == "pytorch_half_pixel" and out_len <= 1:
        return np.zeros(out_len, F32)
    if transform == "half_pixel_symmetric":
        adjustment = F32(out_len) / (scale * F32(in_len))
        offset = F32(in_len) / F32(2) * (F32(1) - adjustment)
        # onnxruntime adds the rest in double (its 0.5 literals are doubles)
        return (np.float64(offset) + (i + 0.5) / np.float64(scale) - 0.5).astype(F32)
    return (i + half) / scale - half


def nearest_indices(coords: np.ndarray, mode: str, downsampling: bool) -> np.ndarray:
    """The input index ``nearest_mode`` rounds each coordinate to (not yet clamped).

    onnxruntime takes a coordinate within NEAREST_TIE_TOLERANCE of a half for a tie (its
    f32 coordinate of an exact half is often an ulp or two off: 3.4999998 for 1 / (2/7)),
    which round_prefer_floor takes down and round_prefer_ceil up; other coordinates
    round as std::round does. floor and ceil take the coordinate as it is."""
    if mode in ("round_prefer_floor", "round_prefer_ceil"):
        coords = coords.astype(F32)
        tie = np.abs(coords - np.floor(coords) - F32(0.5)) <= NEAREST_TIE_TOLERANCE  # exact in f32
        rounded = np.sign(coords) * np.floor(np.abs(coords).astype(np.float64) + 0.5)  # std::round, exact in f64
        return np.where(tie, np.floor(coords) if mode == "round_prefer_floor" else np.ceil(coords), rounded)
    if mode == "floor":
        return np.floor(coords)
    if mode == "ceil":
        return np.ceil(coords)
    return np.ceil(coords) if downsampling else np.trunc(coords)  # "simple": Resize-10, Upsample


def _linear(coords: np.ndarray, in_len: int) -> tuple:
    x = np.clip(coords, 0, in_len - 1).astype(np.float64)
    x1 = np.minimum(np.floor(x).astype(np.int64), in_len - 1)
    x2 = np.minimum(x1 + 1, in_len - 1)
    ratio = np.where(x1 == x2, 0.5, x - x1)
    return np.stack([x1, x2], axis=1), np.stack([1 - ratio, ratio], axis=1)


def _cubic(coords: np.ndarray, in_len: int, a: float, exclude_outside: bool) -> tuple:
    x = coords.astype(np.float64)
    base = np.floor(x).astype(np.int64)
    s = x - base
    coeffs = np.stack([
        np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a)
        for d in (s + 1, s, 1 - s, 2 - s)
    ], axis=1)
    index = base[:, None] + np.arange(-1, 3)[None, :]
    if exclude_outside:
        coeffs = np.where((index < 0) | (index >= in_len), 0.0, coeffs)
        coeffs = coeffs / coeffs.sum(axis=1, keepdims=True)
    return np.clip(index, 0, in_len - 1), coeffs


def _filter(distance: np.ndarray, mode: str, a: float) -> np.ndarray:
    """onnxruntime's antialiasing filters (Pillow's), in f32."""
    x = np.abs(distance).astype(F32)
    if mode == "linear":
        return np.where(x < 1, F32(1) - x, F32(0)).astype(F32)
    a = F32(a)
    near = ((a + F32(2)) * x - (a + F32(3))) * x * x + F32(1)
    far = (((x - F32(5)) * x + F32(8)) * x - F32(4)) * a
    return np.where(x < 1, near, np.where(x < 2, far, F32(0))).astype(F32)


def _antialias_window(mode: str, scale) -> tuple:
    """(half support, 1 / widening, taps) of the antialiasing filter at ``scale``."""
    widening = F32(1) / F32(scale)
    half_support = F32(ANTIALIAS_SUPPORT[mode] * 0.5)
    if widening < 1:  # up-sampling: the plain filter
        return half_support, F32(1), int(np.ceil(half_support)) * 2 + 1
    support = half_support * widening
    return support, F32(1) / widening, int(np.ceil(support)) * 2 + 1


def tap_count(mode: str, scale, antialias: bool) -> int:
    """How many taps an output element of an axis resized with ``scale`` reads."""
    if mode in ANTIALIAS_SUPPORT and antialias:
        return _antialias_window(mode, scale)[2]
    return {"nearest": 1, "linear": 2, "cubic": 4}[mode]


def _antialiased(centers: np.ndarray, in_len: int, scale, mode: str, a: float, exclude_outside: bool) -> tuple:
    """The filter widened by 1/scale when down-sampling (onnxruntime's
    ``SetupUpsampleFilterAA``): a window around each center (coordinate + 0.5),
    weights normalized to sum 1; outside taps are either dropped or clamped to the edge."""
    support, inv_scale, window = _antialias_window(mode, scale)
    first = np.floor(centers - support + F32(0.5)).astype(np.int64)
    last = np.floor(centers + support + F32(0.5)).astype(np.int64)
    if exclude_outside:
        first, last = np.maximum(first, 0), np.minimum(last, in_len)
    taps = np.arange(window)[None, :]
    index = first[:, None] + taps
    used = taps < (last - first)[:, None]
    weights = np.where(used, _filter((index.astype(F32) - centers[:, None] + F32(0.5)) * inv_scale, mode, a), F32(0))
    total = np.zeros(len(centers), F32)
    for t in range(window):  # onnxruntime sums the weights in order, in f32
        total = total + weights[:, t]
    normalize = (total != 0) & (total != 1)
    weights = np.where(normalize[:, None], weights / np.where(normalize, total, F32(1))[:, None], weights)
    return np.clip(index, 0, in_len - 1), weights.astype(np.float64)


def axis_taps(in_len: int, out_len: int, scale, attrs: dict, roi=(0.0, 1.0)) -> AxisTaps:
    """The taps of one axis resized from ``in_len`` to ``out_len`` elements with the
    scale ``scale`` (the coordinate transformation's) and the Resize's ``attrs``;
    ``roi`` is the (start, end) of tf_crop_and_resize's region along this axis."""
    mode, transform = attrs["mode"], attrs["coordinate_transformation_mode"]
    antialiased = bool(attrs.get("antialias", 0)) and mode in ANTIALIAS_SUPPORT
    if antialiased and F32(1) / F32(scale) == 1:  # onnxruntime: centers i + 0.5, whatever the transformation
        coords = np.arange(out_len, dtype=F32)
    else:
        coords = coordinates(out_len, in_len, scale, transform, roi)
    inside = None
    if transform == "tf_crop_and_resize":
        # Antialiased, onnxruntime tests the window's center rather than the coordinate.
        sampled = coords + F32(0.5) if antialiased else coords
        inside = (sampled >= 0) & (sampled <= F32(in_len - 1))
        inside = None if inside.all() else inside
    if mode == "nearest":
        index = nearest_indices(coords, attrs["nearest_mode"], F32(scale) < 1)
        return AxisTaps(np.clip(index, 0, in_len - 1).astype(np.int64)[:, None], None, inside)
    exclude = bool(attrs.get("exclude_outside", 0))
    if antialiased:
        indices, weights = _antialiased(coords + F32(0.5), in_len, scale, mode, attrs["cubic_coeff_a"], exclude)
    elif mode == "linear":
        indices, weights = _linear(coords, in_len)
    else:
        indices, weights = _cubic(coords, in_len, attrs["cubic_coeff_a"], exclude)
    return AxisTaps(indices.astype(np.int64), weights, inside)


__all__ = ["ANTIALIAS_SUPPORT", "NEAREST_TIE_TOLERANCE", "AxisTaps", "axis_taps", "coordinates", "nearest_indices",
           "tap_count"]
