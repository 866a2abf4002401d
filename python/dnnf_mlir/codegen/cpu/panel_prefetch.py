"""After bufferization: the operands a matmul streams from memory prefetched in
software: the filter panels (``panels_pass.py``) a fixed distance ahead of their
reads, and A's rows of the next row tile, alongside the reads of this one.

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

A register tile reads MR rows of A, one element of each per reduction step; the next
tile reads the next MR rows. Where A leaves L2 (a 1x1 convolution's weights, 1 MiB for
ResNet-50's 256 -> 1024, read again for every column panel, from memory for the first
in a whole model) and its rows are short (``prefetches_next_row_tile``), every tile starts
MR new streams of a few lines, which end before the hardware prefetchers have learned
them. The schedule marks the reduction loop (``PREFETCH_NEXT_ROWS_LOOP``); each step then
prefetches the element of every row of the next tile that the same step will read there,
a whole tile's time ahead.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops

PREFETCH_LOOP = "dnnf.prefetch_b"  # on the scf.for of its reduction steps
PREFETCH_NEXT_ROWS_LOOP = "dnnf.prefetch_next_a_rows"  # on the scf.for of a tile's reduction steps
# Floats ahead of the read (8 KiB). Measured in MobileNetV2 (AVX-512, one thread): per
# kernel, the 320 -> 1280 and 960 -> 320 products over 3x3 positions took 0.145 and
# 0.112 ms unprefetched, 0.063 and 0.050 at 512 floats, 0.054 and 0.041 at 1024; the
# whole model, against onnxruntime in the same process (interleaved medians, loaded
# machine), 1.02-1.05 of its time at 1024 floats, 0.94-0.99 at 2048, 0.92-1.04 at 4096.
PREFETCH_DISTANCE = 2048
LINE_BYTES = 64
# A whose rows of the next tile are prefetched: bigger than this (it leaves L2: 1 MiB a
# core on Zen 4, with B's panel and the output beside it), rows of at most
# ``NEXT_ROWS_MAX_ROW_BYTES``. Measured in ResNet-50 (one thread, per-kernel minima of
# 24-30 interleaved runs against the unprefetched kernels, load 6-7): AVX-512, the 1x1
# 256 -> 1024 + residual at 14x14 (1 KiB rows) 0.89-0.92 of the time (75 -> 82-84% of
# the FMA peak), rows of 2 KiB (512 -> 1024, 512 -> 2048) 0.96-0.99; rows of 4 KiB
# (1024 -> 256, 1024 -> 512) 1.12 slower, their streams long enough for the hardware.
# AVX2 (4-row tiles): 1 KiB rows 0.83, 2 KiB 0.77-0.92.
NEXT_ROWS_MIN_A_BYTES = 768 << 10
NEXT_ROWS_MAX_ROW_BYTES = 2048


def streams_argument_panels(b: ir.Value, nr: int) -> bool:
    """Whether a matmul's B operand is one ``[K, NR]`` panel, sliced whole from panels
    ``[P, K, NR]`` that the kernel function gets as an argument (its weights)."""
    slice_op = b.owner if isinstance(b, ir.OpResult) else None
    if slice_op is None or slice_op.name != "tensor.extract_slice" or not isinstance(slice_op.operands[0], ir.BlockArgument):
        return False
    panels = ir.RankedTensorType(slice_op.operands[0].type)
    b_t = ir.RankedTensorType(b.type)
    return panels.rank == 3 and b_t.rank == 2 and list(panels.shape[1:]) == list(b_t.shape) and b_t.shape[1] == nr


def prefetches_next_row_tile(m: int, k: int, mr: int) -> bool:
    """Whether a matmul ``m x k`` by ``k x n`` in row tiles of ``mr`` prefetches the
    next row tile's rows of A (f32) in its reduction loop."""
    return m // mr > 1 and 4 * m * k > NEXT_ROWS_MIN_A_BYTES and 4 * k <= NEXT_ROWS_MAX_ROW_BYTES


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


def _flat_position(read, total: int):
    """(the whole buffer of ``total`` elements that ``read``'s view is of as a flat
    memref, the flat index of the first element ``read`` reads, the last index),
    built before ``read``."""
    memref, arith = _mlir.memref, _mlir.arith
    source = read.operands[0]
    rank = ir.MemRefType(source.type).rank
    metadata = memref.ExtractStridedMetadataOp(source)
    position = metadata.offset
    for i, stride in zip(list(read.operands[1:1 + rank]), list(metadata.strides)):
        position = arith.addi(position, arith.muli(i, stride))
    flat_t = ir.MemRefType.get([total], ir.MemRefType(source.type).element_type)
    flat = memref.reinterpret_cast(flat_t, metadata.base_buffer, [], [], [], [0], [total], [1])
    return flat, position, arith.constant(ir.IndexType.get(), total - 1), metadata


def prefetch_ahead(read, total: int, distance: int):
    """``memref.prefetch`` of the lines ``distance`` elements after those that ``read``
    reads, in the whole buffer (``total`` elements) it views, the index clamped to it;
    before ``read``."""
    memref, arith = _mlir.memref, _mlir.arith
    index = ir.IndexType.get()
    element = ir.MemRefType(read.operands[0].type).element_type
    lanes = ir.VectorType(read.result.type).shape[-1]
    per_line = LINE_BYTES * 8 // ir.FloatType(element).width
    with ir.InsertionPoint(read), read.location:
        flat, position, last, _ = _flat_position(read, total)
        for line in range(math.ceil(lanes / per_line)):
            ahead = arith.addi(position, arith.constant(index, distance + line * per_line))
            memref.prefetch(flat, [arith.minsi(ahead, last)], False, 3, True)


def _first_column_read(loop):
    """The first read in a reduction loop of A's column of a register tile (a vector
    ``[MR, 1]``, MR > 1; the others of an unrolled loop read the same lines), or None."""
    for op in loop.regions[0].blocks[0].operations:
        if op.name == "vector.transfer_read" and isinstance(op.operands[0].type, ir.MemRefType):
            shape = ir.VectorType(op.result.type).shape
            if len(shape) == 2 and shape[0] > 1 and shape[1] == 1:
                return op
    return None


def _prefetch_next_row_tile(read, total: int):
    """``memref.prefetch`` of the elements of the next row tile that the same step of
    its reduction loop reads: ``MR`` rows further, for each of the ``MR`` rows that
    ``read`` reads; before ``read``. The first row is clamped once so that all of them
    stay in the buffer (the last tile prefetches its own rows)."""
    arith = _mlir.arith
    rows = ir.VectorType(read.result.type).shape[0]
    index = ir.IndexType.get()
    with ir.InsertionPoint(read), read.location:
        flat, position, last, metadata = _flat_position(read, total)
        row_stride = list(metadata.strides)[0]
        ahead = arith.addi(position, arith.muli(row_stride, arith.constant(index, rows)))
        first = arith.minsi(ahead, arith.subi(last, arith.muli(row_stride, arith.constant(index, rows - 1))))
        for row in range(rows):
            _mlir.memref.prefetch(flat, [arith.addi(first, arith.muli(row_stride, arith.constant(index, row)))],
                                  False, 3, True)


def prefetch_streamed_panels(module: ir.Module) -> int:
    """Prefetch the B rows of every reduction loop marked ``PREFETCH_LOOP``, the next row
    tile's A rows in every one marked ``PREFETCH_NEXT_ROWS_LOOP``; returns how many reads
    got prefetches."""
    count = 0
    for loop in walk_ops(module.operation, {"scf.for"}):
        if PREFETCH_NEXT_ROWS_LOOP in loop.attributes:
            read = _first_column_read(loop)
            total = viewed_buffer_size(read.operands[0]) if read is not None else None
            if total is not None:
                _prefetch_next_row_tile(read, total)
                count += 1
            del loop.attributes[PREFETCH_NEXT_ROWS_LOOP]
        if PREFETCH_LOOP not in loop.attributes:
            continue
        for read in _b_rows(loop):
            total = viewed_buffer_size(read.operands[0])
            if total is not None:
                prefetch_ahead(read, total, PREFETCH_DISTANCE)
                count += 1
    return count


__all__ = ["LINE_BYTES", "NEXT_ROWS_MAX_ROW_BYTES", "NEXT_ROWS_MIN_A_BYTES", "PREFETCH_DISTANCE", "PREFETCH_LOOP",
           "PREFETCH_NEXT_ROWS_LOOP", "prefetch_ahead", "prefetch_streamed_panels", "prefetches_next_row_tile",
           "streams_argument_panels", "viewed_buffer_size"]
