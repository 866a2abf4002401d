"""After bufferization: the next step's rows of a chunked row group prefetched while its
first chunk loop reads this step's, on AVX-512.

A row group in chunks (``row_chunks.py``: BERT's 768-long add + layer norm) reads a
row from memory once, in its first chunk loop, and computes the other passes over it
from L1. Those passes leave the memory system idle, and on AVX-512 the hardware
prefetchers did not keep a row (two 3 KiB inputs) ahead: in BERT, whose inputs come
from L3 or memory, 12 of its 25 launches reached 55-68% of STREAM (115% with the rows
in cache). The row group's schedule (``row_fusion.py``) marks its chunk loops with
``PREFETCH_NEXT_ROWS`` (the elements of one step of rows; the row loop itself is rebuilt
by bufferization, its attributes lost); ``prefetch_next_rows`` prefetches, next to each
read of the first chunk loop of a row, the lines that many elements further in the same
buffer (the same chunk of the next step's rows), clamped to the buffer.

Measured (one thread, per-launch medians of 3-5 interleaved profiled runs, load 3-14),
AVX-512: BERT-base's 25 add + layer norm launches 1287-1411 -> 974-1170 us, under 70%
of STREAM 12-13 -> 1 (the last, which writes the model's output: lines not in cache);
DistilBERT's 628 -> 517 us, ALBERT's 990 -> 815 (its 128-wide embedding layer norm,
rows kept whole, stays at 50%); GPT-2's even (1369 -> 1376). AVX2 code already
streamed BERT's launches after the FFN at 97% of STREAM and the prefetches cost them
10 us each (1059-1105 -> 1138-1177 us in all): it gets none (``prefetches_rows``), nor
AArch64, unmeasured.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from .panel_prefetch import prefetch_ahead, viewed_buffer_size

PREFETCH_NEXT_ROWS = "dnnf.prefetch_next_rows"  # on a row's chunk loops: the elements of one step of rows
PREFETCH_MIN_LANES = 16  # f32 lanes of a vector: AVX-512's


def prefetches_rows(lanes: int) -> bool:
    """Whether chunked rows get their next rows prefetched on a target of ``lanes`` f32
    lanes per vector (measured: AVX-512 yes, AVX2 no)."""
    return lanes >= PREFETCH_MIN_LANES


def _is_first_loop(loop) -> bool:
    """Whether ``loop`` is the first ``scf.for`` of its block: a row's first chunk loop."""
    for op in loop.block.operations:
        if op.name == "scf.for":
            return op.operation == loop
    return False


def prefetch_next_rows(module: ir.Module) -> int:
    """Prefetch the next step's rows where the first of a row's chunk loops (marked
    ``PREFETCH_NEXT_ROWS``) reads them; returns how many reads got prefetches. A buffer
    no longer than a step (a layer norm's scale) holds no rows."""
    count = 0
    for loop in walk_ops(module.operation, {"scf.for"}):
        if PREFETCH_NEXT_ROWS not in loop.attributes:
            continue
        step = int(ir.StringAttr(loop.attributes[PREFETCH_NEXT_ROWS]).value)
        del loop.attributes[PREFETCH_NEXT_ROWS]
        if not _is_first_loop(loop):
            continue
        for read in list(loop.regions[0].blocks[0].operations):
            if read.name != "vector.transfer_read" or not isinstance(read.operands[0].type, ir.MemRefType):
                continue
            total = viewed_buffer_size(read.operands[0])
            if total is not None and total > step:
                prefetch_ahead(read, total, step)
                count += 1
    return count


__all__ = ["PREFETCH_MIN_LANES", "PREFETCH_NEXT_ROWS", "prefetch_next_rows", "prefetches_rows"]
