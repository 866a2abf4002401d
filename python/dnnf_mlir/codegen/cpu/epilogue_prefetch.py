"""After bufferization: the rows a register tile's epilogue reads and writes (a residual
added to a convolution's result, the output) prefetched in software before the tile's
reduction loop.

A fused epilogue reads its other operands and writes its result once per tile, right
after the reduction loop: MR rows of NR floats at the stride of the output, a few
cache lines apiece that no hardware prefetcher follows (the tiles go down the output
channels, every line in a new row). The out-of-order core cannot reach those accesses
across the hundreds of FMAs of the loop, so every tile waited on its misses. The
matmul's schedule (``matmul.py``) marks the reduction loop of a tile with an epilogue
(``PREFETCH_EPILOGUE_LOOP``); ``prefetch_epilogue_rows`` moves the views (subviews)
that the transfers after the loop read or write whole above it, where their operands
allow, and prefetches every cache line of them there (for writing those written), so
the lines arrive while the loop computes. A view's own elements only: nothing is
addressed outside what the epilogue reads and writes. Measured on ResNet-50's 1x1
64 -> 256 at 56x56 + bias + residual + ReLU alone (one thread, interleaved, loaded
machine, against the same kernel unprefetched): AVX-512 0.81 of the time (medians)
with the reads prefetched, 0.80 with the writes too, minima 1.19 -> 1.04 ms
(onnxruntime 1.36); AVX2 minima 1.30 -> 1.09 ms; without the residual (bias + ReLU)
0.94 (AVX-512), even (AVX2). In the whole model (per-launch minima of 8-10
interleaved runs, load 8-10): its three launches took 0.80-0.83 of the time in one run,
the first one only (1.51 -> 1.26 ms) in another; the 1x1 kernels together 0.98 on
AVX-512, 1.00 on AVX2 (where write prefetches are plain ones, without PRFCHW), against
1.007 for the untouched 3x3 ones.

The lines of a row are those of its first element and every line on, and of its last
one where rows do not start on a line (14x14 outputs: rows of 196 floats, a tile's 32
columns over three lines, of which the last went unprefetched). A short reduction
(K = 64: 64 -> 256 at 56x56, some 500 cycles of FMAs) does not cover the misses of
its own tile, so each tile also prefetches the next row tile's rows (the next tile
the loops compute: row tiles are the inner loop), through a view of the same shape
whose row offset is clamped to the last tile's (nothing outside the buffer).
Prefetching only the next tile's rows was slower than only its own (the current
tile's lines, issued a whole tile earlier, were still missed); both together won. Where
the tiles go along the columns inside a loop over row tiles (``matmul.tiles_rows_outer``)
the next tile is the next column tile: its view's column offset is moved and clamped
the same way.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import comes_before, walk_ops
from .panel_prefetch import LINE_BYTES

PREFETCH_EPILOGUE_LOOP = "dnnf.prefetch_epilogue"  # on the scf.for of a tile's reduction steps
# Its value: which tile the loops compute next, whose rows are prefetched too: the next
# row tile (row tiles the inner loop) or the next column tile (``matmul.tiles_rows_outer``).
NEXT_ROW_TILE, NEXT_COLUMN_TILE = "rows", "columns"
# The most lines prefetched per view: a register tile's rows are a few dozen lines
# (8 rows of 2 lines on AVX-512); a bigger view is no register tile.
MAX_LINES = 64


def _available_at(value: ir.Value, loop) -> bool:
    """Whether ``value``, an operand of an op after ``loop`` in its block, is available
    before ``loop``: a block argument or an op's result from a block around it, or from
    an op before ``loop`` in its block."""
    if isinstance(value, ir.BlockArgument) or value.owner.operation.block != loop.block:
        return True
    return comes_before(value.owner.operation, loop)


def _epilogue_views(loop) -> list:
    """The views (``memref.subview``) that the transfers after ``loop`` in its block, up
    to the next loop, read or write whole, each once as (view, written): float views of
    rows (rank >= 2) of at most ``MAX_LINES`` lines."""
    views = []
    after = False
    for op in loop.block.operations:
        if op.operation == loop:
            after = True
            continue
        if after and op.name == "scf.for":
            break  # the next tile's loop (a loop of tiles unrolled): its epilogue is its own
        if not after or op.name not in ("vector.transfer_read", "vector.transfer_write"):
            continue
        written = op.name == "vector.transfer_write"
        source, vector = (op.operands[1], op.operands[0].type) if written else (op.operands[0], op.result.type)
        if not isinstance(source, ir.OpResult) or source.owner.name != "memref.subview":
            continue
        view_t, vector_shape = ir.MemRefType(source.type), ir.VectorType(vector).shape
        if not isinstance(view_t.element_type, ir.FloatType) or len(vector_shape) < 2:
            continue
        lines = math.prod(vector_shape[:-1]) * math.ceil(vector_shape[-1] / _per_line(view_t))
        seen = any(view.operation == source.owner.operation for view, _ in views)
        if list(view_t.shape) == list(vector_shape) and lines <= MAX_LINES and not seen:
            views.append((source.owner, written))
    return views


def _per_line(view_t: ir.MemRefType) -> int:
    """Elements of a (float) view per cache line."""
    return LINE_BYTES * 8 // ir.FloatType(view_t.element_type).width


def _row_columns(view_t: ir.MemRefType) -> list:
    """The columns of a row of ``view_t`` whose lines are its lines: one per line from
    its first, and its last where rows do not start on a line (a row stride, in
    elements, that is no multiple of a line: 14x14 outputs, 196 floats, whose rows of
    32 floats touch three lines)."""
    per_line, width = _per_line(view_t), view_t.shape[-1]
    columns = list(range(0, width, per_line))
    row_stride = view_t.get_strides_and_offset()[0][-2]
    if width > 1 and (row_stride == ir.ShapedType.get_dynamic_stride_or_offset() or row_stride % per_line):
        columns.append(width - 1)
    return columns


def _prefetch_view(view, written: bool, loop):
    """``memref.prefetch`` (for writing where ``written``) of every line of every row of
    ``view``, before ``loop``."""
    memref, arith = _mlir.memref, _mlir.arith
    view_t = ir.MemRefType(view.results[0].type)
    *outer, _ = view_t.shape
    columns = _row_columns(view_t)
    index = ir.IndexType.get()
    with ir.InsertionPoint(loop), loop.location:
        positions = [[]]
        for extent in outer:
            positions = [row + [i] for row in positions for i in range(extent)]
        constants = {v: arith.constant(index, v) for v in {0, *range(max(outer)), *columns}}
        for row in positions:
            for column in columns:
                memref.prefetch(view.results[0], [constants[i] for i in row + [column]], written, 3, True)


def _next_tile(view, loop, columns: bool):
    """A clone of ``view`` before ``loop`` whose rows (its dim before the last), or
    ``columns`` (its last dim), start where the next tile's do, its offset plus its
    extent there, clamped so that the view stays in its source (the last tile views its
    own); None when that offset is static or its source is not a static buffer of its
    rank."""
    arith = _mlir.arith
    view_t, source_t = ir.MemRefType(view.results[0].type), ir.MemRefType(view.operands[0].type)
    if source_t.rank != view_t.rank or not source_t.has_static_shape:
        return None
    dim = view_t.rank - (1 if columns else 2)
    offsets = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
    if offsets[dim] != ir.ShapedType.get_dynamic_stride_or_offset():
        return None
    position = 1 + sum(1 for o in offsets[:dim] if o == ir.ShapedType.get_dynamic_stride_or_offset())
    extent, index = view_t.shape[dim], ir.IndexType.get()
    with ir.InsertionPoint(loop), loop.location:
        ahead = arith.addi(view.operands[position], arith.constant(index, extent))
        clamped = arith.minsi(ahead, arith.constant(index, source_t.shape[dim] - extent))
        clone = view.operation.clone(ir.InsertionPoint(loop))
    clone.operands[position] = clamped
    return clone


def prefetch_epilogue_rows(module: ir.Module) -> int:
    """Prefetch, before every reduction loop marked ``PREFETCH_EPILOGUE_LOOP``, the views
    its epilogue reads and writes after it; returns how many views got prefetches."""
    count = 0
    for loop in walk_ops(module.operation, {"scf.for"}):
        if PREFETCH_EPILOGUE_LOOP not in loop.attributes:
            continue
        columns = ir.StringAttr(loop.attributes[PREFETCH_EPILOGUE_LOOP]).value == NEXT_COLUMN_TILE
        for view, written in _epilogue_views(loop):
            if view.operation.block == loop.block and comes_before(loop, view.operation):
                # Only a view of this tile's epilogue moves (a view defined before the
                # loop may be another tile's too, and its prefetches before it).
                if not all(_available_at(v, loop) for v in view.operands):
                    continue
                view.move_before(loop)
            _prefetch_view(view, written, loop)
            ahead = _next_tile(view, loop, columns)
            if ahead is not None:
                _prefetch_view(ahead, written, loop)
            count += 1
        del loop.attributes[PREFETCH_EPILOGUE_LOOP]
    return count


__all__ = ["NEXT_COLUMN_TILE", "NEXT_ROW_TILE", "PREFETCH_EPILOGUE_LOOP", "prefetch_epilogue_rows"]
