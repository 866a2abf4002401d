"""The plan of ``linalg.matmul`` / ``batch_matmul`` (f32): a register-blocked
micro-kernel whose steps are the transform library ``lowering/cpu/matmul.mlir``.

This computes what depends on the shapes and the target: MR x NR register tiles (8 x 2
vectors on AVX-512 and NEON, ``tiles.matmul_register_tile``), split over the threads
(``tile_using_forall``, the zero fill fused with ``fuse_into_containing_op``), its B
panels packed where enough row tiles read them (``packs_runtime_b``), its k loop
unrolled, and whether an element-wise consumer (bias, activation) becomes the root of
the tiling, applied to the accumulators before the single store (epilogue fusion). The
accumulator stays in registers across k (``CpuPlanner.finish`` hoists it, once for the
whole function). An M or N that is not a multiple of its tile ends in a partial tile,
peeled off its loop: every tile is static and keeps the epilogue. Where the threads could
split nothing but such a dim (an uneven split is dynamic) padded to whole tiles, taller
register tiles whose row tiles divide evenly among them are taken where the registers
allow (``tiles.even_row_tile``); where no dim divides evenly at all, narrower column
tiles that do (``tiles.even_column_tile``). Failing that, or where the partial columns are more than
a vector but not whole vectors (LLVM's code for those is slower than the padding) behind
few whole tiles, the op is padded to whole tiles instead, its epilogue then a pass of
its own; for the latter, tiles one vector wide leave less than a vector to peel where
A stays in L2 and a vector is a cache line (``ONE_VECTOR_MAX_A_BYTES``). The reduction
loop of a product that streams a kernel argument's filter panels (``panel_prefetch.py``)
is marked for software prefetching of B, that of a product whose A leaves L2 in short
rows for prefetching the next row tile's rows of A (the same module); that of a tile
with an epilogue, for prefetching the rows the epilogue reads and writes
(``epilogue_prefetch.py``). Where A leaves L2 but B stays, and a packed panel would not
stay in L1 beside A's rows, the tiles go rows outer, B read in place, A once
(``tiles_rows_outer``).
"""

from __future__ import annotations

import math

from ..._mlir import ir
from ..kernel_plan import OpSchedule
from ..transform_script import TAG
from .cpu_planner import CpuPlanner
from .epilogue_prefetch import NEXT_COLUMN_TILE, NEXT_ROW_TILE, PREFETCH_EPILOGUE_LOOP
from .panel_prefetch import (NEXT_ROWS_MIN_A_BYTES, PREFETCH_LOOP, PREFETCH_NEXT_ROWS_LOOP, prefetches_next_row_tile,
                             streams_argument_panels)
from ..linalg_queries import has_default_maps, static_tensor_type
from .rows import schedule_rows
from .tiles import even_column_tile, even_row_tile, even_split, matmul_register_tile, matmul_tile_rows, rows_alias


LIBRARY = "cpu/matmul.mlir"
RAGGED_PEEL_MIN_TILES = 16  # whole register tiles before a ragged partial one that is peeled
# A ragged N of two-vector tiles (see ``schedule_matmul``) is instead tiled one vector
# wide, its tail then less than a vector and peeled, where A (M x K, one batch's) fits
# in L2 (1 MiB on Zen 4 and Zen 5), which the twice as many column tiles read again,
# and a vector is a cache line (AVX-512: AVX2's one-vector tiles, half a line, measured
# no faster: 48 x 169 x 384 and 128 x 57 x 128 within 2%).
# Padding costs a copy of B, a copy out of the padded result and the padded columns'
# multiply-adds, a large share where K is short. Measured (Zen 4, AVX-512, one thread,
# interleaved, padded -> one vector): Winograd's convolutions at 27x27 and 28x28 (N =
# 49 tiles; the kernel with its transforms) 32 -> 128 channels 345 -> 229 us, 64 -> 64
# 308 -> 218, 64 -> 96 428 -> 306, 96 -> 96 594 -> 440, 128 -> 128 1.70 -> 0.88 ms;
# matmuls with N = 49: 128 x 128 33 -> 24 us, 256 x 256 96 -> 80, 1024 x 256 315 ->
# 289; but 2048 x 512 (A 4 MiB) 1.26 -> 1.87 ms.
ONE_VECTOR_MAX_A_BYTES = 1 << 20
# A B computed at run time (a 1x1 convolution's input; constant weights are panels
# made at compile time, ``weight_panels.py``) is packed only when at least this many
# row tiles read each panel, see ``packs_runtime_b``.
RUNTIME_PACK_MIN_ROW_TILES = 16
CACHE_LINE_BYTES = 64
# The most bytes of B read in place by every row tile of a matmul tiled rows outer
# (``tiles_rows_outer``): a quarter of Zen 4's 1 MiB L2, the output's rows beside them.
ROWS_OUTER_MAX_B_BYTES = 256 << 10
L1_BYTES = 32 << 10  # first-level data cache per core (Zen 4, most x86 and Arm cores)


def schedule_matmul(planner: CpuPlanner, op, batch: bool, epilogue=None) -> bool:
    """Schedule a matmul / batch_matmul; returns whether ``epilogue`` was fused.

    The steps are the sequences of ``lowering/cpu/matmul.mlir``; this computes their
    parameters and which of them apply. ``epilogue`` is an element-wise linalg.generic
    consuming the result: it becomes the root of the tiling, the matmul tile is
    computed inside its register tile and the epilogue applies to the accumulators
    before the single store.
    """
    s = planner.script
    a, b = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1])
    c = static_tensor_type(op.results[0])
    if a is None or b is None or c is None or not has_default_maps(op):
        schedule_rows(planner, op)
        return False
    shape = list(c.shape)
    bsz = shape[0] if batch else 1
    m, n = shape[-2], shape[-1]
    k = a.shape[-1]
    kind = "batch_matmul" if batch else "matmul"
    tag = planner.new_tag(op)
    mr, nr, pm, pn = matmul_register_tile(m, n, planner.target)
    nb = 1 if batch else 0
    counts = ([bsz] if batch else []) + [pm // mr, pn // nr]  # tiles per dim
    # Dims with a partial last tile: peeled after tiling (whole tiles, then one partial
    # tile, each static and with the epilogue) unless the threads can split only such a
    # dim, whose uneven chunks would be dynamic, or the partial columns are more than a
    # vector but not whole vectors: then the op is padded to whole tiles. (Measured,
    # batch matmuls [36, 192, N, 128], one thread: AVX-512, N = 41 (9 columns left)
    # 0.52 -> 0.40 ms peeled, but N = 49 (17) 0.53 -> 1.19 ms and N = 57 (25) 0.56 ->
    # 1.86 ms; AVX2, N = 49 (1 left) 1.10 -> 0.99 ms, N = 41 (9) 0.83 -> 1.15 ms.)
    # Behind ``RAGGED_PEEL_MIN_TILES`` whole tiles such a tail is a small share of the
    # work, and padding costs more: a padded copy of B and the epilogue a pass of its
    # own (SqueezeNet's 1x1 convolutions + bias + ReLU at 55x55, N = 3025, AVX-512, one
    # thread: 64 -> 16 channels 91 -> 32 us, 128 -> 16 124 -> 67 us; at 27x27, N = 729, even).
    lanes = planner.target.lanes(32)
    ragged = n % nr > lanes and n % nr % lanes != 0 and n // nr < RAGGED_PEEL_MIN_TILES
    if ragged and nr == 2 * lanes and lanes * 4 >= CACHE_LINE_BYTES and m * k * 4 <= ONE_VECTOR_MAX_A_BYTES:
        # One-vector column tiles instead: their tail is under a vector, peeled.
        nr, ragged = lanes, False
        mr = matmul_tile_rows(m, nr, planner.target)
        pm, pn = math.ceil(m / mr) * mr, math.ceil(n / nr) * nr
        counts[nb:] = [pm // mr, pn // nr]
    partial = [False] * nb + ([False, False] if ragged else [pm != m, pn != n])
    details = dict(register_tile=(mr, nr))
    split_dim = None
    if planner.threads > 1:
        # Split the dim whose tiles divide evenly among the threads (static tiles in
        # every thread), preferring N (each thread packs its own B panels), then the
        # batch (the same, and no shared A rows: Winograd's 36 products), then M
        # (every thread packs every B panel); else the one with most tiles.
        order = [nb + 1] + ([0] if batch else []) + [nb]
        split_dim = even_split(counts, [d for d in order if not partial[d]], planner.threads)
        if split_dim is None and any(partial):
            split_dim = even_split(counts, order, planner.threads)
            rows = even_row_tile(m, mr, nr, planner.threads, planner.target) if split_dim is not None else None
            if rows is not None:
                # Rather than pad the partial tiles to split them: taller register
                # tiles whose row tiles divide evenly among the threads.
                mr, pm, split_dim = rows, m, nb
                counts[nb], partial[nb] = m // rows, False
                details["register_tile"] = (mr, nr)
            else:
                partial = [False] * len(partial)
        # Not over rows of A that alias (taller tiles would evict their own rows).
        narrows = split_dim is None and not rows_alias(k)
        cols = even_column_tile(n, nr, planner.threads, planner.target) if narrows else None
        if cols is not None:
            # No dim's tiles divide evenly (few rows): narrower column tiles whose
            # count does, each thread computing its columns over all the rows.
            nr, mr = cols, matmul_tile_rows(m, cols, planner.target)
            pm, pn, split_dim = math.ceil(m / mr) * mr, n, nb + 1
            counts[nb:], partial[nb:] = [pm // mr, n // nr], [pm != m, False]
            details["register_tile"] = (mr, nr)
        if split_dim is None:
            # Uneven chunks would make the tiles of the last thread dynamic, which
            # the vectorizer cannot handle unmasked: stay on one thread.
            details["threads"] = 1
    padded = (pm, pn) != (m, n) and not any(partial)
    details["padded"] = padded
    if any(partial):
        details["peeled"] = "".join(d for d, p in zip("mn", partial[nb:]) if p)
    if padded:
        epilogue = None
    h = s.match([op.name], tag=tag)
    h, isolated = planner.isolate_operands(op, h, [0, 1, 2])
    if isolated:
        details["materialized_operands"] = True

    if padded:
        func = s.parent_func(h)
        s.include(LIBRARY, f"__dnnf_{kind}_pad_to_register_tiles", [h], [mr, nr], results=1)
        s.canonicalize(func)
        h = s.match([op.name], tag=tag)
        # Materialize the padded operands now, so that tiling does not fuse the pads
        # (the pad of a zero-filled accumulator folded into a bigger fill).
        init = op.operands[2]
        init_is_fill = isinstance(init, ir.OpResult) and init.owner.name == "linalg.fill"
        for index, pad in ((0, pm != m), (1, pn != n), (2, not init_is_fill)):
            if pad:
                s.bufferize_to_allocation(s.producer_of(h, index))
                h = s.match([op.name], tag=tag)

    split = None
    if split_dim is not None:
        split = [0] * (nb + 2)
        split[split_dim] = counts[split_dim] // planner.threads * (([1] if batch else []) + [mr, nr])[split_dim]

    root, fill, etag = planner.contraction_root(op, h, epilogue, details)
    func = s.parent_func(root)
    if split is not None:
        sizes = split if epilogue is not None else split + [0]
        root, forall = s.tile_forall(root, sizes)
        if epilogue is not None:
            _, forall = s.fuse_into(h, forall)
        if fill is not None:
            s.fuse_into(fill, forall)
        details["forall"] = sizes

    kind_tiles = "register_tiles" if epilogue is None else "epilogue_register_tiles"
    rows_outer = epilogue is not None and not batch and split is None and tiles_rows_outer(m, n, k, mr, nr)
    if rows_outer:
        kind_tiles += "_rows_outer"
        details["rows_outer"] = True
    _, *loops = s.include(LIBRARY, f"__dnnf_{kind}_{kind_tiles}", [root], [mr, nr], results=3 + nb)
    m_loop, n_loop = loops[:2] if rows_outer else loops[-1:-3:-1]
    # The accumulators' fills in the tiles, tagged to be found after peeling.
    fill_tag = f"{tag}.acc"
    s.annotate(s.match(["linalg.fill"], within=loops[0]), TAG, fill_tag)
    tags, scope = _peel_partial_tiles(s, m_loop, n_loop, rows_outer, loops[0], partial[nb:], func, op, tag)

    def tiled():
        return s.merge([s.match([op.name], within=scope, tag=t) for t in tags]) if len(tags) > 1 else \
            s.match([op.name], within=scope, tag=tag)

    if not rows_outer and packs_runtime_b(m, k, mr, nr, batch) and not _one_panel(op.operands[1], nr):
        # Nor would a B that is one panel already; a peeled last row tile (no loop to
        # hoist the copy out of) reads B unpacked.
        s.include(LIBRARY, f"__dnnf_{kind}_pack_b", [s.match([op.name], within=scope, tag=tags[0])], results=1)
        details["packed_b"] = (k, nr)
    (kloop,) = s.include(LIBRARY, f"__dnnf_{kind}_k_steps", [tiled()], results=1)
    if streams_argument_panels(op.operands[1], nr):
        s.annotate(kloop, PREFETCH_LOOP, "b")
        details["prefetched_b"] = True
    if epilogue is not None:
        s.annotate(kloop, PREFETCH_EPILOGUE_LOOP, NEXT_COLUMN_TILE if rows_outer else NEXT_ROW_TILE)
    if not batch and prefetches_next_row_tile(m, k, mr):
        s.annotate(kloop, PREFETCH_NEXT_ROWS_LOOP, "")
        details["prefetched_next_rows"] = True
    unroll = next((u for u in (4, 2) if k % u == 0 and k > u), 1)
    if unroll > 1:
        s.unroll(kloop, unroll)
        details["k_unroll"] = unroll
    fills = s.match(["linalg.fill"], within=scope, tag=fill_tag)
    s.include(LIBRARY, "__dnnf_matmul_vectorize", [tiled(), fills])
    if epilogue is not None:
        s.vectorize(s.match([epilogue.name], within=scope, tag=etag))
    planner.cleanup()
    planner.add_schedule(OpSchedule(tag, op.name, (bsz, m, n, k) if batch else (m, n, k), "matmul", details))
    return epilogue is not None


def packs_b(m: int, k: int, mr: int) -> bool:
    """Whether the schedule packs B's panels (when B is not one panel already): few row
    tiles of MR rows would not repay the copy, nor a short K."""
    return m // mr >= 4 and k >= 16


def packs_runtime_b(m: int, k: int, mr: int, nr: int, batch: bool) -> bool:
    """Whether the schedule packs B's panels on every call (``packs_b``), for a 2-D
    matmul only where at least ``RUNTIME_PACK_MIN_ROW_TILES`` row tiles read each panel,
    K is at least 32 or its rows are narrower than a cache line: a panel read in place
    is K rows of whole cache lines, which the row tiles after the first find in L1 or
    L2. Measured on AVX-512 (one thread, 1x1 convolutions + ReLU, the copy against
    none, interleaved): 8 row tiles, 256 -> 64 at 56x56 0.89 of the time unpacked,
    64 -> 64 0.93, 512 -> 64 at 13x13 0.90, 4 and 6 row tiles (SqueezeNet's 256 -> 32
    at 27x27, 384 -> 48 at 13x13) 0.87 and 0.86, 12 (1024 -> 96 at 14x14) 0.94; but 16
    (512 -> 128 at 28x28) 1.02, 125 (512 -> 1000 at 13x13) 1.02 and K = 16 (16 -> 64 at
    55x55, panels of 2 KiB) 1.05. AVX2 (MR = 4): 256 -> 32 at 27x27 0.94, 64 output
    channels (16 row tiles, still packed) 0.97-1.03. Batch matmuls (Winograd's 36
    products, attention) keep ``packs_b``."""
    if not packs_b(m, k, mr):
        return False
    whole_lines = nr * 4 >= CACHE_LINE_BYTES
    return batch or m // mr >= RUNTIME_PACK_MIN_ROW_TILES or k < 32 or not whole_lines


def tiles_rows_outer(m: int, n: int, k: int, mr: int, nr: int) -> bool:
    """Whether the register tiles go along N inside a loop over row tiles (m outer),
    reading B in place, rather than along M inside one over B's packed panels: where a
    packed panel and a tile's MR rows of A do not fit in L1 together (K x NR floats of
    the panel evicted by the rows streaming past them), A leaves L2
    (``NEXT_ROWS_MIN_A_BYTES``: a 1x1 convolution's weights, from memory in a whole
    model) and would be read again for every panel, while B, read by every row tile,
    stays in L2 beside the output's rows (at most ``ROWS_OUTER_MAX_B_BYTES``), in rows
    that do not alias in L1 (``tiles.rows_alias``), each tile row at least two cache
    lines (B's rows, read in place, start anywhere in a line: a row of one line's
    floats touches two). A is then read once, and each row tile writes its output rows
    whole. Measured (one thread, load 10-14, interleaved, the caches flushed between
    calls as a whole model's other weights do): ResNet-50's 1x1 256 -> 1024 + residual
    + ReLU at 14x14 alone, AVX-512 (32 KiB panels beside 8 KiB of A) 0.96 of the time
    (medians), in the model 0.93 (minima of its six launches); AVX2 (16 columns, one
    line) 1.24 here, 1.31 for 512 -> 2048 + residual at 7x7, where it stays packed."""
    return (4 * k * (nr + mr) > L1_BYTES and 4 * nr >= 2 * CACHE_LINE_BYTES and 4 * m * k > NEXT_ROWS_MIN_A_BYTES
            and 4 * k * n <= ROWS_OUTER_MAX_B_BYTES and n > nr and m // mr > 1 and not rows_alias(n))


def _peel_partial_tiles(s, m_loop, n_loop, rows_outer: bool, outermost, partial: list, func: str, op, tag: str):
    """Peel the partial last tile off the tile loops ``m_loop`` and ``n_loop`` (the outer
    one ``m_loop`` where ``rows_outer``) where ``partial`` ([m, n]) says so, then
    canonicalize ``func`` so that every tile is static. The inner loop goes first
    (peeling the outer one clones it, whose handle then fails); the tiled ``op`` in the
    loop of whole row tiles is retagged ``<tag>.rows``. Returns the tags of the tiled
    ops (the first one's op in a loop of whole row tiles) and the handle to match them
    in: the ``outermost`` loop, or the function once a peeled loop of one iteration may
    have been folded away."""
    if not any(partial):
        return [tag], outermost
    m_partial, n_partial = partial
    tags = [tag]
    peels = [(n_loop, n_partial, False), (m_loop, m_partial, True)]
    for loop, peeled, rows in peels if rows_outer else peels[::-1]:
        if not peeled:
            continue
        whole, _ = s.include(LIBRARY, "__dnnf_peel_partial_tile", [loop], results=2)
        if rows:
            tags.insert(0, f"{tag}.rows")
            s.annotate(s.match([op.name], within=whole, tag=tag), TAG, tags[0])
    s.canonicalize(func)
    return tags, func


def _one_panel(b: ir.Value, nr: int) -> bool:
    """Whether the matmul's B operand is one contiguous K x NR panel, as packing would
    make it: NR columns, not a slice of wider rows (``panels_pass.py``'s filter panels,
    slices ``[1, K, NR]`` of ``[F / NR, K, NR]``)."""
    if static_tensor_type(b).shape[-1] != nr:
        return False
    producer = b.owner if isinstance(b, ir.OpResult) else None
    if producer is None or producer.name != "tensor.extract_slice":
        return True
    return static_tensor_type(producer.operands[0]).shape[-1] == nr and all(
        int(v) == 1 for v in ir.DenseI64ArrayAttr(producer.attributes["static_strides"]))


__all__ = ["packs_b", "packs_runtime_b", "schedule_matmul"]
