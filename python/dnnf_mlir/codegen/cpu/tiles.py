"""How big the CPU kernels' tiles are: register tiles from the vector shape of the
target, thread splits, and the sizes past which a schedule gives up a strategy.
"""

from __future__ import annotations

import math
from typing import Optional

from .target import CpuTarget

# Element-wise ops and copies with fewer elements stay on one thread: splitting them
# costs an OpenMP fork and join (a few microseconds), about the time one core takes to
# stream 2^15 floats (128 KiB).
PARALLEL_MIN_ELEMENTS = 1 << 15
# An op is vectorized in one piece only when its vector tile (and its reduction) has at
# most this many elements: the vector lowering unrolls an n-D vector into registers, and
# larger tiles make LLVM's code size and compile time explode; such ops stay loops.
MAX_VECTOR_ELEMENTS = 4096
# The lowering unrolls an n-D vector into one 1-D vector per index of its outer dims:
# a [64, 64, 1] row is 4,096 one-element vectors per op (90,000 lines of LLVM IR that
# opt -O3 did not finish in 15 minutes) where [64, 64] is 64 vectors of 64.
MAX_UNROLLED_VECTORS = 256
# The share of the vector registers the accumulators of a matmul may take when they
# hold all of its M rows: M = 9 (a 1x1 convolution over 3x3 positions as channel
# panels, ``panels_pass.py``) was 8 rows and a peeled one, whose two FMA chains per k
# wait on their latency. Measured (AVX-512, one thread, against onnxruntime in the same
# run): MobileNetV2's 320 -> 1280 and 960 -> 320 over 3x3 took 1.00 and 1.05 of
# onnxruntime's time as 8 + 1 rows, 0.79 and 0.80 as one tile of 9 rows.
WHOLE_M_REGISTERS = 3 / 4
# A direct convolution's input above this size leaves L2 (1 MiB per core on Zen 4 and
# Zen 5) between two blocks of output channels: with the filters' block and the output
# rows beside it, 3/4 of it (``conv_rows_outer``).
STREAMED_INPUT_BYTES = 768 << 10
# Rows this many bytes apart map to one set of the first-level cache (8 ways on Zen 4
# and Zen 5): a register tile of more rows of A so far apart evicts its own rows.
ALIASED_ROW_BYTES = 4096


def fits_in_vectors(shape) -> bool:
    """Whether an n-D vector of ``shape`` stays one piece: at most ``MAX_VECTOR_ELEMENTS``
    elements, unrolled into at most ``MAX_UNROLLED_VECTORS`` 1-D vectors."""
    return math.prod(shape) <= MAX_VECTOR_ELEMENTS and math.prod(shape[:-1]) <= MAX_UNROLLED_VECTORS


def largest_divisor(n: int, candidates) -> Optional[int]:
    """The first of ``candidates`` (largest first) that divides ``n``, or None."""
    for c in candidates:
        if c and n % c == 0:
            return c
    return None


def matmul_register_tile(m: int, n: int, target: CpuTarget):
    """(MR, NR, padded M, padded N) of the matmul micro-kernel.

    NR is a multiple of the vector length (two vectors when possible; for a single
    row as many as the accumulators allow, else two chains of FMAs wait on their
    latency), MR rows of NR/L accumulator vectors use about half of the vector registers.
    An M that fits in three quarters of them is one tile of its own (``WHOLE_M_REGISTERS``).
    """
    lanes = target.lanes(32)
    acc_budget = target.vector_registers // 2  # accumulators; the rest holds B and broadcasts
    if n <= lanes:
        nr = n  # one (partial) vector
    elif m == 1:
        # One row (a recurrence's step): independent FMA chains, each adding one
        # broadcast of A times a row of B.
        nr = largest_divisor(n, [v * lanes for v in range(acc_budget, 0, -1)]) or 2 * lanes
    else:
        # One whole vector (and a partial tile after it) where two would be mostly
        # padding: N = 20 as 16 + 4 columns, not 32.
        nr = largest_divisor(n, [2 * lanes, lanes, 4 * lanes]) or (2 * lanes if n > 2 * lanes else lanes)
    mr = matmul_tile_rows(m, nr, target)
    pm = math.ceil(m / mr) * mr
    pn = math.ceil(n / nr) * nr
    return mr, nr, pm, pn


def matmul_tile_rows(m: int, nr: int, target: CpuTarget) -> int:
    """MR, the rows of a matmul register tile ``nr`` columns wide: M itself where it fits
    in ``WHOLE_M_REGISTERS`` of the vector registers, else a divisor of M that fills
    about half of them (``matmul_register_tile``)."""
    nvec = max(1, math.ceil(nr / target.lanes(32)))
    mr_max = max(1, target.vector_registers // 2 // nvec)
    if m <= mr_max or m * nvec <= target.vector_registers * WHOLE_M_REGISTERS:
        return m
    return largest_divisor(m, [c for c in range(mr_max, max(mr_max // 2, 1) - 1, -1)]) or mr_max


def even_row_tile(m: int, mr: int, nr: int, threads: int, target: CpuTarget) -> Optional[int]:
    """The fewest rows above ``mr`` of a matmul register tile ``nr`` columns wide that
    divide M into whole row tiles, as many for every thread, within ``WHOLE_M_REGISTERS``
    of the vector registers for the accumulators; None if there are none. For a matmul
    whose threads would otherwise split its tiles only padded to whole ones: SqueezeNet's
    classifier, a 1x1 convolution 512 -> 1000 at 13x13 on AVX-512 (M = 1000 as 125 tiles
    of 8 rows, N = 169 as 5 tiles of 32 and 9 columns), split its columns padded to 192
    (a padded copy of B, the result copied out of a padded buffer, 96 columns a thread
    where the peeled tiles are 88); as 100 tiles of 10 rows each thread takes 50, N
    peeled. One thread, 10 rows against 8: 1.665 against 1.649 ms, fastest of 8 (Zen 4).
    A matmul that no split suits even padded stays on one thread: a small one (Inception
    v1's 1x1 480 -> 24 at 14x14) took twice the time on 2 threads on a busy Zen 4."""
    nvec = max(1, math.ceil(nr / target.lanes(32)))
    budget = int(target.vector_registers * WHOLE_M_REGISTERS) // nvec
    return next((rows for rows in range(mr + 1, budget + 1) if m % rows == 0 and m // rows % threads == 0), None)


def rows_alias(row_floats: int) -> bool:
    """Whether rows of ``row_floats`` f32 elements lie a multiple of
    ``ALIASED_ROW_BYTES`` apart, where a tall register tile over them evicts its own rows."""
    return 4 * row_floats % ALIASED_ROW_BYTES == 0


def even_column_tile(n: int, nr: int, threads: int, target: CpuTarget) -> Optional[int]:
    """The widest register tile of whole vectors narrower than ``nr`` whose column tiles
    divide N evenly among the threads, or None. For a matmul whose threads would split
    nothing else: DenseNet's 3x3 convolutions 128 -> 32 at 7x7 as one panel of 32
    channels (``panels_pass.py``) over 49 rows are 7 row tiles of 7 x 32, which ran on one
    thread; as 2 column tiles of 16 each thread computes one."""
    lanes = target.lanes(32)
    return next((w for w in range(nr - lanes, 0, -lanes) if n % w == 0 and n // w % threads == 0), None)


def even_split(tiles, order, threads: int) -> Optional[int]:
    """The first dim in ``order`` whose tile count divides evenly among the threads."""
    for d in order:
        if tiles[d] >= threads and tiles[d] % threads == 0:
            return d
    return None


def conv_width_throughput(wv: int, target: CpuTarget) -> float:
    """Relative throughput of the convolution micro-kernel on rows of ``wv`` columns
    (measured on AVX-512: two registers per row amortize the weight broadcasts best)."""
    lanes = target.lanes(32)
    return 1.0 if wv >= 2 * lanes else 0.75 if wv >= lanes else 0.55


def conv_accumulators(target: CpuTarget) -> int:
    """Vector registers the direct convolution's register tile accumulates in: half of
    32 (AVX-512; 12 channels x 2 vectors measured the same as 8 x 2), three quarters of
    16 (AVX2: the two input vectors and a broadcast fit in the other four). Measured on
    Zen 4 (one thread, thread CPU time, interleaved): AlexNet's 3x3 group 192 -> 192 at
    12x12 took 0.90 of the time as 6 channels x 2 vectors than as 4 x 2 on AVX2."""
    registers = target.vector_registers
    return registers * 3 // 4 if registers <= 16 else registers // 2


def conv_vector_tile(ow: int, f: int, target: CpuTarget):
    """(FR output channels, WV output columns, OW padded to a multiple of WV).

    Vectors along the output width must be whole registers (or half ones): LLVM
    splits an accumulator of, say, 28 floats into 16 + 8 + 4 lanes and shuffles
    between them, which costs more than computing a few padded columns.
    """
    lanes = target.lanes(32)
    candidates = [2 * lanes, lanes, max(1, lanes // 2)]
    wv = min(candidates, key=lambda w: (math.ceil(ow / w) * w / conv_width_throughput(w, target), -w))
    padded = math.ceil(ow / wv) * wv
    nvec = max(1, wv // lanes)
    fr_max = max(1, conv_accumulators(target) // nvec)
    fr = largest_divisor(f, range(fr_max, 0, -1)) or 1
    return fr, wv, padded


def conv_rows_outer(input_bytes: int, filter_bytes: int, channel_blocks: int, rows: int) -> bool:
    """Whether the direct convolution's register tiles go row by row (every block of FR
    output channels of an output row, then the next row) rather than channel block by
    channel block over the whole image. Blocks outer read the whole input once per block,
    from L2 where it stays there (``STREAMED_INPUT_BYTES``); rows outer read all the
    filters once per output row: where the input does not stay, the order that streams
    fewer bytes. Measured on Zen 4 (one thread, minima of 30-40 interleaved runs, conv +
    bias + ReLU): ResNet-50's 3x3 128 -> 128 stride 2 from 56x56 (its phases' input 2
    MiB, 4 times the filters) took 0.74 of the time rows outer on AVX2 (x86-64-v3: 32
    blocks of 4 channels), 1.0 on AVX-512 (16 blocks of 8); 256 -> 256 from 28x28 (0.9
    MiB, the filters 2.3) 0.88 on AVX2 (64 blocks); VGG's 3 -> 64 at 224x224 (0.6 MiB,
    tiny filters) 1.2-1.3 on both, which the input staying in L2 excludes."""
    return rows > 1 and input_bytes > STREAMED_INPUT_BYTES and channel_blocks * input_bytes > rows * filter_bytes


def peeled_conv_columns(ow: int, f: int, target: CpuTarget) -> int:
    """The output columns of a strided convolution's last, partial register tile when it
    is computed as a tile of its own (peeled, ``conv.py``) rather than padded, else 0:
    at most one vector (LLVM's code for a few vectors and a ragged one is slower than
    the padding), after one whole tile at least (a row that is one ragged tile, 14
    columns of 16, would load every tap of every input channel in pieces). Peeled, the
    phases write the model's output directly, without the copy of the columns the
    model has out of the widened result."""
    _, wv, padded = conv_vector_tile(ow, f, target)
    partial = ow % wv
    return partial if padded != ow and ow > wv and partial <= target.lanes(32) else 0


def narrow_conv_rows(ow: int, f: int, target: CpuTarget) -> bool:
    """Whether the direct convolution would run on rows narrower than a vector register
    (``conv_vector_tile``): a single-image one is then a matmul over its patches
    (``convolutions.convolutions_to_matmul``)."""
    return conv_vector_tile(ow, f, target)[1] < target.lanes(32)


__all__ = [
    "ALIASED_ROW_BYTES",
    "MAX_UNROLLED_VECTORS",
    "MAX_VECTOR_ELEMENTS",
    "PARALLEL_MIN_ELEMENTS",
    "STREAMED_INPUT_BYTES",
    "conv_accumulators",
    "conv_rows_outer",
    "conv_vector_tile",
    "conv_width_throughput",
    "even_column_tile",
    "even_row_tile",
    "even_split",
    "largest_divisor",
    "fits_in_vectors",
    "matmul_register_tile",
    "matmul_tile_rows",
    "rows_alias",
    "narrow_conv_rows",
    "peeled_conv_columns",
]
