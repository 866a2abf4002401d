"""A LRN's window of channels computed in NC4HW4 (``nc4hw4.py``), so that a blocked
kernel (``blocked_kernels.py``) reads and writes a LRN with no copy back to NCHW.

The LRN lowers to the squares padded along channels (a ``tensor.pad`` of dim 1) and a
reduction generic summing ``size`` of them (``(n, c, h, w, k) -> (n, c + k, h, w)``).
Blocked, that pair is one gather over ``(n, cb, h, w, ci)`` whose body reads the
``size`` channels ``cb * 4 + ci + k - before`` with ``tensor.extract``, each index
clamped into ``[0, C)`` and its value taken as 0 outside it: the lanes past C (finite,
not zero) never enter a window, whatever C is. The squares' element-wise producers are
evaluated in the gather's body (``gathers.inline_gathered_producers``), so that the
kernel's tiles read its arguments, not a value computed whole.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, generic, index_constant
from ..linalg_queries import channel_pad, producer
from .gathers import inline_gathered_producers
from .nc4hw4 import BLOCK, blocked_init


def blocked_channel_window(op, layouts: dict):
    """The blocked gather computing the ``is_channel_window`` op ``op``, its padded
    source read from ``layouts`` (value -> (tensor, whether blocked)): the source must
    have been computed blocked or be an argument read as NCHW."""
    pad = producer(op.operands[0])
    before, _ = channel_pad(pad)
    source, blocked = layouts[pad.operands[0]]
    channels = ir.RankedTensorType(pad.operands[0].type).shape[1]
    size = ir.RankedTensorType(op.operands[1].type).shape[0]
    element = ir.RankedTensorType(op.results[0].type).element_type
    arith = _mlir.arith

    def body(_out):
        n, cb, h, w, ci = [_mlir.linalg.IndexOp(d).result for d in range(5)]
        channel = arith.addi(arith.muli(cb, index_constant(BLOCK)), ci)
        total = arith.constant(element, 0.0)
        for k in range(size):
            at = arith.addi(channel, index_constant(k - before)) if k != before else channel
            inside = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, at, index_constant(0)),
                                arith.cmpi(arith.CmpIPredicate.slt, at, index_constant(channels)))
            clamped = arith.minsi(arith.maxsi(at, index_constant(0)), index_constant(channels - 1))
            if blocked:
                indices = [n, arith.divui(clamped, index_constant(BLOCK)), h, w,
                           arith.remui(clamped, index_constant(BLOCK))]
            else:
                indices = [n, clamped, h, w]
            value = _mlir.tensor.extract(source, indices)
            total = arith.addf(total, arith.select(inside, value, arith.constant(element, 0.0)))
        return total

    gather = generic([], [affine_map(5, [0, 1, 2, 3, 4])], [blocked_init(op.results[0])], body)[0]
    inline_gathered_producers(gather.owner)
    return gather


__all__ = ["blocked_channel_window"]
