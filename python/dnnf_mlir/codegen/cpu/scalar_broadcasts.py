"""After bufferization: a vector read of one element broadcast over its lanes becomes a
scalar load and a ``vector.broadcast``.

The vectorizer reads a per-channel constant (``[C, 1, 1]``: QLinearConv's bias and
scale, broadcast over a channel's plane in the requantizing epilogue) as a
``vector.transfer_read`` whose map is ``(d0, d1, d2) -> (d0, 0, 0)`` into a
``vector<1x1x256>``. The transfer permutation patterns keep it (its broadcast dims
trail), and vector-to-scf lowers it to a loop of one scalar load and one insert at a
dynamic lane per lane, which LLVM does through the stack: the four such reads of each
channel made resnet_qdq's 1x1/2 convolution + residual kernel take 0.043 ms, 10 GFLOP/s.
``scalar_broadcast_reads`` rewrites every unmasked, in-bounds read of a memref whose
vector dims are each a broadcast (a constant 0 of its map) or of one lane, and at least
one broadcast of more than one lane, into the element's ``memref.load`` at the read's
indices (the one element it reads) and a ``vector.broadcast``.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops


def _broadcasts_one_element(read) -> bool:
    """Whether the ``vector.transfer_read`` view ``read`` reads one element of a memref,
    unmasked and in bounds, broadcast over more than one lane (see the module docstring)."""
    if not isinstance(read.base.type, ir.MemRefType) or read.mask is not None:
        return False
    if not all(ir.BoolAttr(b).value for b in read.in_bounds):
        return False
    lanes = ir.VectorType(read.result.type).shape
    results = list(read.permutation_map.value.results)
    broadcast = [isinstance(e, ir.AffineConstantExpr) and ir.AffineConstantExpr(e).value == 0 for e in results]
    if not all(b or n == 1 for b, n in zip(broadcast, lanes, strict=True)):
        return False
    return any(b and n > 1 for b, n in zip(broadcast, lanes, strict=True))


def scalar_broadcast_reads(module: ir.Module) -> int:
    """Rewrite each read of one element broadcast over its lanes (see the module
    docstring); returns how many."""
    count = 0
    for op in walk_ops(module.operation, {"vector.transfer_read"}):
        read = op.opview
        if not _broadcasts_one_element(read):
            continue
        with ir.InsertionPoint(op), op.location:
            element = _mlir.memref.load(read.base, list(read.indices))
            lanes = _mlir.vector.broadcast(read.result.type, element)
        op.results[0].replace_all_uses_with(lanes)
        op.erase()
        count += 1
    return count


__all__ = ["scalar_broadcast_reads"]
