"""Shape arithmetic shared by the ops' ``infer`` functions."""

from typing import Sequence

import numpy as np

from .base import VerificationError
from .tensor_spec import TensorSpec


def broadcast(*shapes: Sequence[int]) -> tuple:
    """The numpy/ONNX multidirectional broadcast of ``shapes``."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise VerificationError("operand shapes " + ", ".join(str(tuple(s)) for s in shapes) + " do not broadcast") from None


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise VerificationError(f"{what} {axis} is out of range for rank {rank}")
    return axis % max(rank, 1)


def normalize_axes(axes: Sequence[int], rank: int) -> list:
    normalized = [normalize_axis(a, rank) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise VerificationError(f"axes {list(axes)} repeat an axis")
    return normalized


def same_dtype(operands: Sequence[TensorSpec], what: str = "operands") -> np.dtype:
    dtypes = {spec.dtype for spec in operands}
    if len(dtypes) != 1:
        raise VerificationError(f"{what} must have one element type, got " + ", ".join(sorted(str(d) for d in dtypes)))
    return operands[0].dtype


def require(condition: bool, message: str):
    if not condition:
        raise VerificationError(message)


def require_float(spec: TensorSpec, what: str = "operand"):
    require(spec.is_float, f"{what} must have a floating-point element type, got {spec}")


def require_rank(spec: TensorSpec, ranks, what: str = "operand"):
    ranks = (ranks,) if isinstance(ranks, int) else tuple(ranks)
    require(spec.rank in ranks, f"{what} must have rank {' or '.join(map(str, ranks))}, got {spec}")


def reachable_kernel(in_sizes, begins, ends, kernel, dilations) -> list:
    """The window taps, per spatial dim, that read the padded input for some window
    (tap t of the first window reads position t * dilation, later windows further on);
    the others read only ceil mode's positions past the padding, which add nothing. A
    window far past its input (EfficientNet's pooler, AvgPool2d(1280, ceil_mode) on
    3x3) then costs its nine values, not the 1280x1280 window."""
    return [min(k, -(-(n + b + e) // d)) for n, b, e, k, d in zip(in_sizes, begins, ends, kernel, dilations)]


def window_extra_end(in_sizes, begins, ends, kernel, strides, dilations, out_sizes) -> list:
    """Padding past ``ends`` that the last windows of a windowed op read (ceil mode), per
    spatial dim, so that every window lies inside the padded input."""
    return [
        max(0, (o - 1) * s + (k - 1) * d + 1 - (n + b + e))
        for n, b, e, k, s, d, o in zip(in_sizes, begins, ends, kernel, strides, dilations, out_sizes)
    ]
