"""NC4HW4, the channel-blocked layout of MNN and ncnn, as the blocked kernels
(``blocked_kernels.py``, ``blocked_reorganize.py``) build on it.

An activation ``[N, C, H, W]`` is kept as ``[N, ceil(C/4), H, W, 4]``: four channels of
one pixel innermost. The channels past C hold finite values that no result reads: a
convolution's filters are zero there, a pooling or element-wise op keeps its lanes apart,
a concatenation only follows inputs whose channels fill their blocks, and the copy back
to NCHW drops them. Inside a kernel a value is either blocked or an NCHW argument whose
channels ``read`` pads with zeros to a multiple of 4, read through the expression
``cb * 4 + ci``; ``materialized`` makes the latter blocked where an op needs the tensor.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, generic, make_pad

BLOCK = 4  # channels a block: one vec4


def blocks(channels: int) -> int:
    return -(-channels // BLOCK)


def blocked_type(t: ir.Type) -> ir.RankedTensorType:
    """``[N, C, H, W]`` -> ``[N, ceil(C/4), H, W, 4]``."""
    n, c, h, w = ir.RankedTensorType(t).shape
    return ir.RankedTensorType.get([n, blocks(c), h, w, BLOCK], ir.RankedTensorType(t).element_type)


def is_activation(t: ir.Type) -> bool:
    if not isinstance(t, ir.RankedTensorType):
        return False
    tensor = ir.RankedTensorType(t)
    return tensor.rank == 4 and tensor.has_static_shape and isinstance(tensor.element_type, ir.F32Type)


def _pad(value, low: list, high: list, fill: float):
    """``tensor.pad`` of ``value`` (static ``low`` / ``high``) with the constant ``fill``."""
    if not any(low) and not any(high):
        return value
    return make_pad(value, low, high, _mlir.arith.constant(ir.RankedTensorType(value.type).element_type, fill))


def read(value, blocked: bool, spatial_low=(0, 0), spatial_high=(0, 0), fill=0.0):
    """An activation as a blocked op reads it: (tensor, whether blocked), padded
    spatially with ``fill`` as given; an NCHW one has its channels padded to a multiple
    of 4 with zeros (an infinite ``fill`` there would make the zero filters NaN)."""
    if blocked:
        return _pad(value, [0, 0, *spatial_low, 0], [0, 0, *spatial_high, 0], fill), True
    extra = blocks(ir.RankedTensorType(value.type).shape[1]) * BLOCK - ir.RankedTensorType(value.type).shape[1]
    if fill == 0.0:
        return _pad(value, [0, 0, *spatial_low], [0, extra, *spatial_high], 0.0), False
    return _pad(_pad(value, [0] * 4, [0, extra, 0, 0], 0.0), [0, 0, *spatial_low], [0, 0, *spatial_high], fill), False


def activation_map(dims: int, blocked: bool, cb, ci, rows, columns) -> ir.AffineMap:
    """How a loop nest of ``dims`` loops reads an activation: batch loop 0, the channel
    block and lane ``cb`` and ``ci`` (loops, or expressions of them), the spatial
    expressions ``rows`` and ``columns``."""
    d = ir.AffineDimExpr.get
    cb, ci = (d(e) if isinstance(e, int) else e for e in (cb, ci))
    channel = [cb, ci] if blocked else [cb * BLOCK + ci]
    result = [d(0), channel[0], rows, columns] + channel[1:]
    return affine_map(dims, result)


def blocked_init(like, fill=None):
    """An init tensor of ``like``'s blocked type, filled with ``fill`` where given."""
    empty = _mlir.tensor.empty(blocked_type(like.type).shape, ir.RankedTensorType(like.type).element_type)
    return empty if fill is None else _mlir.linalg.fill(fill, outs=[empty])


def materialized(value, blocked: bool):
    """The blocked tensor of an activation as ``read`` gives it: itself if blocked, else
    a copy in NC4HW4 (where an op needs the tensor, not a read expression)."""
    if blocked:
        return value
    x, _ = read(value, False)
    d = ir.AffineDimExpr.get
    return generic([x], [activation_map(5, False, 1, 4, d(2), d(3)), affine_map(5, [0, 1, 2, 3, 4])],
                   [blocked_init(value)], lambda v, _out: v)[0]


__all__ = ["BLOCK", "activation_map", "blocked_init", "blocked_type", "blocks", "is_activation", "materialized",
           "read"]
