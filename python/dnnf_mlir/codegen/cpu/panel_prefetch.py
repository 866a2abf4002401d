"""After bufferization: the filter panels a matmul streams through (``panels_pass.py``)
prefetched in software, a fixed distance ahead of their reads.

A channel-panel product reads its B operand, the ``[F / NR, K, NR]`` filter panels, once
per call, one ``NR``-wide row per reduction step: in a whole model the filters of a
late layer (1.6 MB for MobileNetV2's 320 -> 1280) come from memory, and the hardware
prefetchers followed the single stream at 15 GB/s, a third of this core's bandwidth.
The matmul's schedule (``matmul.py``) marks the reduction loop of such a product
(``streams_argument_panels``: its B one panel of a kernel argument, as the weights
arrive; ``PREFETCH_LOOP``); ``prefetch_streamed_panels`` adds, for every row of B read in it,
``memref.prefetch`` of the cache lines ``PREFETCH_DISTANCE`` floats further in the same
buffer (past the end of a panel: the next one), the index clamped to the buffer so that
nothing is addressed outside it.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops

PREFETCH_LOOP = "dnnf.prefetch_b"  # on the scf.for of its reduction steps
# Floats ahead of the read (8 KiB). Measured in MobileNetV2 (AVX-512, one thread): per
# kernel, the 320 -> 1280 and 960 -> 320 products over 3x3 positions took 0.145 and
# 0.112 ms unprefetched, 0.063 and 0.050 at 512 floats, 0.054 and 0.041 at 1024; the
# whole model, against onnxruntime in the same process (interleaved medians, loaded
# machine), 1.02-1.05 of its time at 1024 floats, 0.94-0.99 at 2048, 0.92-1.04 at 4096.
PREFETCH_DISTANCE = 2048
LINE_BYTES = 64


def streams_argument_panels(b: ir.Value, nr: int) -> bool:
    """Whether a matmul's B operand is one ``[K, NR]`` panel, sliced whole from panels
    ``[P, K, NR]`` that the kernel function gets as an argument (its weights)."""
    slice_op = b.owner if isinstance(b, ir.OpResult) else None
    if slice_op is None or slice_op.name != "tensor.extract_slice" or not isinstance(slice_op.operands[0], ir.BlockArgument):
        return False
    panels = ir.RankedTensorType(slice_op.operands[0].type)
    b_t = ir.RankedTensorType(b.type)
    return panels.rank == 3 and b_t.rank == 2 and list(panels.shape[1:]) == list(b_t.shape) and b_t.shape[1] == nr


def viewed_buffer_size(value: ir.Value):
    """Elements of the static, identity-layout buffer ``value`` is a view of (through
    ``memref.subview`` ops), or None."""
    while isinstance(value, ir.OpResult) and value.owner.name == "memref.subview":
        value = value.owner.operands[0]
    t = ir.MemRefType(value.type)
    if not t.has_static_shape:
        return None
    strides, offset = t.get_strides_and_offset()
    row_major = [math.prod(t.shape[i + 1:]) for i in range(t.rank)]
    return math.prod(t.shape) if offset == 0 and list(strides) == row_major else None


def _b_rows(loop) -> list:
    """The reads of B in a marked reduction loop: the vector reads along the innermost
    dim of more than one lane (A's are columns of one)."""
    rows = []
    for op in loop.regions[0].blocks[0].operations:
        if op.name != "vector.transfer_read" or not isinstance(op.operands[0].type, ir.MemRefType):
            continue
        vector = ir.VectorType(op.result.type)
        if vector.shape[-1] > 1 and all(d == 1 for d in vector.shape[:-1]):
            rows.append(op)
    return rows


def prefetch_ahead(read, total: int, distance: int):
    """``memref.prefetch`` of the lines ``distance`` elements after those that ``read``
    reads, in the whole buffer (``total`` elements) it views, the index clamped to it;
    before ``read``."""
    memref, arith = _mlir.memref, _mlir.arith
    source = read.operands[0]
    rank = ir.MemRefType(source.type).rank
    index = ir.IndexType.get()
    element = ir.MemRefType(source.type).element_type
    lanes = ir.VectorType(read.result.type).shape[-1]
    per_line = LINE_BYTES * 8 // ir.FloatType(element).width
    with ir.InsertionPoint(read), read.location:
        metadata = memref.ExtractStridedMetadataOp(source)
        base, offset = metadata.base_buffer, metadata.offset
        strides = list(metadata.strides)
        position = offset
        for i, stride in zip(list(read.operands[1:1 + rank]), strides):
            position = arith.addi(position, arith.muli(i, stride))
        flat_t = ir.MemRefType.get([total], element)
        flat = memref.reinterpret_cast(flat_t, base, [], [], [], [0], [total], [1])
        last = arith.constant(index, total - 1)
        for line in range(math.ceil(lanes / per_line)):
            ahead = arith.addi(position, arith.constant(index, distance + line * per_line))
            memref.prefetch(flat, [arith.minsi(ahead, last)], False, 3, True)


def prefetch_streamed_panels(module: ir.Module) -> int:
    """Prefetch the B rows of every reduction loop marked ``PREFETCH_LOOP``; returns how
    many reads got prefetches."""
    count = 0
    for loop in walk_ops(module.operation, {"scf.for"}):
        if PREFETCH_LOOP not in loop.attributes:
            continue
        for read in _b_rows(loop):
            total = viewed_buffer_size(read.operands[0])
            if total is not None:
                prefetch_ahead(read, total, PREFETCH_DISTANCE)
                count += 1
    return count


__all__ = ["LINE_BYTES", "PREFETCH_DISTANCE", "PREFETCH_LOOP", "prefetch_ahead", "prefetch_streamed_panels",
           "streams_argument_panels", "viewed_buffer_size"]
