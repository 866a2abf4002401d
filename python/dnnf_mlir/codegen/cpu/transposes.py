"""Transposes that move the innermost dim: square register blocks.

A row of a transposed result reads its input with a stride, one scalar load per lane
(0.13 ms for a 512x256 f32 transpose, 2.8x onnxruntime). Tiling both the result's
innermost loop and the loop that walks the input's innermost dim to one ``B x B``
block makes both sides contiguous: ``B`` vector loads of input rows, a transpose in
registers, ``B`` vector stores of result rows. A 16x16 block of 32-bit elements is
transposed by MLIR's ``shuffle_16x16`` lowering (64 two-source shuffles, no scalar
moves), an 8x8 block (extents that 16 does not divide) by the same patterns' one
shuffle of its 64 elements, which LLVM splits into register shuffles. Blocks are
never masked (a masked block transposed its masks element by element): over extents
that neither size divides, the partial last block of each is peeled off its loop
(``rows.py``), a static tile of its own; extents below 8 keep the row schedule.

Measured on a Zen 4 (AVX-512), 1 thread, against onnxruntime: 512x256 0.131 -> 0.014
ms, 1x12x128x64 (keys) 0.026 -> 0.012 ms, 1x64x56x56 to NHWC (8x8) 0.038 -> 0.024 ms.
"""

from __future__ import annotations

from typing import Optional

from ..._mlir import ir
from ..linalg_queries import indexing_maps, parallel_loops

# Block sizes tried, largest first: 16x16 (the shuffle lowering's shape) then 8x8.
BLOCKS = (16, 8)
# The in-register lowering of a 16x16 block, applied inside the block's loop nest.
SHUFFLE_PATTERNS = ('vector.transfer_permutation_patterns', 'vector.lower_transpose lowering_strategy = "shuffle_16x16"')


def input_inner_loop(op) -> Optional[int]:
    """The loop, other than the innermost, that walks the innermost dim of an input read
    transposed (a permutation of all loops, every loop parallel), or None."""
    if op.name == "linalg.transpose":
        # Result dim i is input dim permutation[i].
        permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        loop = permutation.index(len(permutation) - 1)
        return loop if loop != len(permutation) - 1 else None
    if op.name != "linalg.generic":
        return None
    parallel = parallel_loops(op)
    for amap in indexing_maps(op)[:-1]:
        if not amap.is_permutation or not isinstance(amap.results[-1], ir.AffineDimExpr):
            continue
        loop = ir.AffineDimExpr(amap.results[-1]).position
        if loop != len(parallel) - 1 and parallel[loop]:
            return loop
    return None


def transpose_block(op, loop_ranges: list, element_bits: int) -> Optional[tuple]:
    """(loop, B, ragged): tile ``loop`` (see ``input_inner_loop``) and the innermost loop
    to ``B`` for a ``B x B`` register transpose; ``ragged`` when B does not divide both
    (the largest block both extents hold at least once: the last, partial blocks are
    peeled off, ``rows.py``), or None when they hold no whole block."""
    loop = input_inner_loop(op)
    if loop is None or element_bits != 32 or not all(parallel_loops(op) or [True]):
        return None
    for block in BLOCKS:
        if loop_ranges[loop] % block == 0 and loop_ranges[-1] % block == 0:
            return loop, block, False
    for block in BLOCKS:
        if min(loop_ranges[loop], loop_ranges[-1]) >= block:
            return loop, block, True
    return None


__all__ = ["BLOCKS", "SHUFFLE_PATTERNS", "input_inner_loop", "transpose_block"]
