"""The schedule of every linalg op that is not a contraction: element-wise generics,
fills, transposes, reductions, pooling taps.

Rows of vectors: every parallel dim but the innermost is tiled to 1 and the op is
vectorized (masked where a row is not a multiple of the vector), except that a transpose
moving the innermost dim is tiled in square blocks (``transposes.py``) and one reading
short groups transposed (``short_transposed_dim``: a strided convolution's or window's
phases) takes whole rows (``MAX_WHOLE_TRANSPOSED_ROW``); failures there are silenced and
the op becomes scalar loops. Scalar loops too, by choice, for 0-d ops and
ops walking an operand backwards (negative Slice steps, which tiling gets wrong), and
gathers of bool elements (no x86 or NEON gather moves bytes: LLVM would scalarize the
vector gather into more code than the loop). Other ops reading or writing bool (i1)
tensors are vectorized like the rest: their vector loads and stores move a byte per
lane (``byte_bools.py``). Big ops are first split among the threads.
"""

from __future__ import annotations

import math
from typing import Optional

from ..._mlir import ir
from ..kernel_plan import OpSchedule, Planner
from ...ir_walk import walk_ops
from ..linalg_queries import element_bits, indexing_maps, parallel_loops, reverses_access, static_tensor_type
from .transposes import SHUFFLE_PATTERNS, transpose_block
from .tiles import MAX_VECTOR_ELEMENTS, PARALLEL_MIN_ELEMENTS, fits_in_vectors


WHOLE_ROW_VECTORS = 8  # without AVX-512: a row of whole vectors up to this many is one tile


def row_width(row: int, lanes: int, target) -> int:
    """The elements of a ``row`` vectorized at a time: up to 4 vectors. A row longer than
    that and not a multiple of it is tiled dynamically, and every tile's loads and stores
    are then masked. AVX-512's masks are free; AVX2's masked loads and stores
    (``vmaskmovps``) are not: on x86 without AVX-512 a row of whole vectors, up to
    ``WHOLE_ROW_VECTORS``, is one tile, and a longer one takes the widest whole number
    of vectors dividing it, where one does. On Zen 4, AVX2: a bicubic pass over rows of
    56, 139 us in masked tiles of 32, 33 us whole; an add over rows of 784, 94 us in
    masked tiles of 32, 26 us in tiles of 16."""
    width = min(row, 4 * lanes)
    if row <= width or row % width == 0 or target.arch != "x86_64" or "avx512f" in target.features:
        return width
    if row % lanes == 0 and row <= WHOLE_ROW_VECTORS * lanes:
        return row
    return next((w for w in range(width - lanes, 0, -lanes) if row % w == 0), width)


def schedule_rows(planner: Planner, op):
    """Rows of vectors: tile every parallel dim but the innermost to 1 and vectorize."""
    s = planner.script
    if not op.results and not op.operands:
        return
    if not op.results:
        return  # already on buffers
    out = static_tensor_type(op.results[0])
    if out is None:
        return
    loop_ranges = static_loop_ranges(op)
    if loop_ranges is None:
        return
    parallel = parallel_loops(op) or [True] * len(loop_ranges)  # named ops without iterators: fills, copies
    tag = planner.new_tag(op)
    rank = len(loop_ranges)
    if rank == 0 or reverses_access(op) or gathers_bools(op):
        # Nothing to tile (a 0-d fill); backward accesses (negative Slice steps):
        # tiling computes wrong operand slices; byte gathers have no vector instruction.
        planner.add_schedule(OpSchedule(tag, op.name, tuple(loop_ranges), "loops", {}))
        return
    lanes = planner.target.lanes(element_bits(out))
    block = None
    sizes = [1 if p else 0 for p in parallel]
    vsizes = [1 if p else r for p, r in zip(parallel, loop_ranges)]
    inner = rank - 1
    if parallel[inner]:
        width = row_width(loop_ranges[inner], lanes, planner.target) if loop_ranges[inner] > 0 else 1
        sizes[inner] = width
        vsizes[inner] = width
        across = short_transposed_dim(op, loop_ranges)
        block = None if across is not None else transpose_block(op, loop_ranges, element_bits(out))
        if across is not None:
            sizes[across] = vsizes[across] = loop_ranges[across]
            if loop_ranges[across] * loop_ranges[inner] <= MAX_WHOLE_TRANSPOSED_ROW:
                sizes[inner] = vsizes[inner] = loop_ranges[inner]
        elif block is not None:
            across, width, _ = block
            sizes[across] = vsizes[across] = sizes[inner] = vsizes[inner] = width
    reduction_elems = math.prod(r for p, r in zip(parallel, loop_ranges) if not p)
    if not any(parallel) and rank > 1:
        # A reduction to a scalar over several dims: loops over all but the innermost,
        # each step reducing one row horizontally into the accumulator. As one n-D
        # vector it was unrolled into a load per row: a 32x16x8x1 reduction became
        # 29,000 lines of LLVM IR that LLVM did not finish compiling in minutes.
        sizes, vsizes = [1] * (rank - 1) + [0], [1] * (rank - 1) + [loop_ranges[-1]]
        reduction_elems = loop_ranges[-1]
    whole = fits_in_vectors(vsizes)
    h = s.match([op.name], tag=tag)
    details = {}
    # Elements written, every result counted (Winograd's transforms write 36 and 16).
    if planner.threads > 1 and math.prod(loop_ranges) * len(op.results) >= PARALLEL_MIN_ELEMENTS:
        # The outermost parallel dim with a chunk for every thread (not the unit
        # batch dim of a single image, which would leave the op on one thread).
        dims = [i for i, p in enumerate(parallel) if p and loop_ranges[i] >= planner.threads]
        if block is not None and block[2]:
            # A block dim's chunks must be whole blocks, the same in every thread (a
            # peeled or uneven one would make the blocks dynamic): another dim, or none.
            dims = [d for d in dims if d not in (block[0], inner) or loop_ranges[d] % (planner.threads * block[1]) == 0]
        if dims:
            outer = dims[0]
            fs = [0] * rank
            fs[outer] = math.ceil(loop_ranges[outer] / planner.threads)
            if block is not None and outer in (block[0], inner):
                fs[outer] = math.ceil(fs[outer] / block[1]) * block[1]  # whole blocks per thread
            arg = s.begin_suppressed(h)
            s.tile_forall(arg, fs)
            s.end_nested()
            h = s.match([op.name], tag=tag)
            details["forall"] = fs
    if any(sizes) and whole and reduction_elems <= MAX_VECTOR_ELEMENTS:
        arg = s.begin_suppressed(h)
        t, loops = s.tile_for(arg, sizes)
        if block is not None and block[2]:
            _peeled_blocks(planner, op, tag, t, loops, [d for d, size in enumerate(sizes) if size], block)
            details["transpose_block"] = block[1]
            details["peeled"] = True
        else:
            s.vectorize(t, vsizes)
            if block is not None:
                s.patterns(loops[0], SHUFFLE_PATTERNS)
                details["transpose_block"] = block[1]
        if reduces_trailing_loops(parallel):
            horizontal_reductions(s, loops[0])
        s.end_nested()
        details["vector"] = vsizes
        strategy = "vectorized"
    elif not any(sizes) and whole:
        arg = s.begin_suppressed(h)
        s.vectorize(arg, vsizes)
        s.end_nested()
        strategy = "vectorized"
    else:
        strategy = "loops"
    planner.add_schedule(OpSchedule(tag, op.name, tuple(loop_ranges), strategy, details))


# The transform library whose @__dnnf_peel_partial_tile peels a loop's partial last tile.
PEEL_LIBRARY = "cpu/matmul.mlir"


def _peeled_blocks(planner: Planner, op, tag: str, tiled: str, loops: list, tiled_dims: list, block):
    """Vectorize ``op``, tiled to ``B x B`` blocks (``transpose_block``) over extents that
    B does not divide: the partial last block of each such dim peeled off its loop (the
    innermost first), the tiles of the loop of whole blocks of the outer dim made static,
    vectorized and the whole ones lowered to shuffles there, then the others, static
    once canonicalized, vectorized whole (a masked block moved its elements one at a
    time)."""
    s = planner.script
    func = s.parent_func(tiled)
    across, width, _ = block
    ranges = static_loop_ranges(op)
    region = loops[0]
    for dim in sorted((across, tiled_dims[-1]), reverse=True):
        if ranges[dim] % width:
            whole, _ = s.include(PEEL_LIBRARY, "__dnnf_peel_partial_tile", [loops[tiled_dims.index(dim)]], results=2)
            region = whole if dim == across else region
    s.patterns(region, ["canonicalization"])  # sizes that the peeling made constants: static tiles
    s.vectorize(s.match([op.name], within=region, tag=tag))
    s.patterns(region, SHUFFLE_PATTERNS)
    s.canonicalize(func)
    s.vectorize(s.match([op.name], within=func, tag=tag))


def gathers_bools(op) -> bool:
    """Whether ``op`` reads i1 elements through ``tensor.extract`` (a gather of bools)."""
    types = [e.results[0].type for e in walk_ops(op, {"tensor.extract"})]
    return any(isinstance(t, ir.IntegerType) and t.width == 1 for t in types)


# A transposed read is vectorized whole along an input's innermost dim up to this long.
MAX_TRANSPOSED_INNER = 4
# ... and along the output's innermost dim (the row of phases: [S, W/S]) up to this many
# elements in all. A row cut into vectors of 4 * lanes columns has a ragged last one, and
# its tiles are masked, every one: a mask computed at run time, a masked load of each
# input column pair, spills. The phases of a 224x224 image's columns, [2, 129]: 3 -> 24,
# 32, 64 channel 3x3/2 first layers 0.71-0.83 of the time of a strided copy per phase,
# where tiles of 64 columns took 1.03-1.19 (AVX-512; AVX2 0.69-0.85, was 0.77-0.89;
# ResNet's 7x7/2 0.92 on AVX-512, 1.0 on AVX2).
MAX_WHOLE_TRANSPOSED_ROW = 1024


def short_transposed_dim(op, loop_ranges: list) -> Optional[int]:
    """The parallel loop, other than the innermost, that indexes the innermost dim of an
    input read transposed (a permutation of all loops) when it is short (at most
    ``MAX_TRANSPOSED_INNER``: the pairs of ``[W, 2] -> [2, W]``, a strided window's
    phases): the vector then covers it too, so the input is read contiguously and
    transposed in registers instead of a load per lane."""
    if op.name != "linalg.generic":
        return None
    parallel = parallel_loops(op)
    for amap in indexing_maps(op)[:-1]:
        if not amap.is_permutation:
            continue
        last = amap.results[-1]
        if not isinstance(last, ir.AffineDimExpr):
            continue
        d = ir.AffineDimExpr(last).position
        if d != len(loop_ranges) - 1 and parallel[d] and loop_ranges[d] <= MAX_TRANSPOSED_INNER:
            return d
    return None


def reduces_trailing_loops(parallel: list) -> bool:
    """Whether an op's reduction loops (there is one at least) come after all its parallel ones."""
    return not parallel[-1] and all(parallel[: parallel.index(False)]) and not any(parallel[parallel.index(False):])


def horizontal_reductions(s, loop: str):
    """Lower the vectorized reductions in ``loop``, over the innermost dims, to
    ``vector.reduction`` of whole rows (a tree of vector ops once lowered to LLVM,
    which reassociates them), rather than the serial chain that the module's
    ``innerparallel`` lowering, right for reductions over outer dims, makes of them."""
    s.patterns(loop, [
        'vector.multi_reduction_flattening lowering_strategy = "innerreduction"',
        'vector.multi_reduction_unrolling lowering_strategy = "innerreduction"',
    ])


def static_loop_ranges(op) -> Optional[list]:
    """Static iteration-domain extents of a linalg op (from its operand shapes and maps)."""
    try:
        maps = indexing_maps(op)
    except (KeyError, ValueError, TypeError):
        maps = None
    operands = list(op.operands)
    if op.name == "linalg.reduce":
        source = static_tensor_type(operands[0])
        return list(source.shape) if source is not None else None
    if maps is None:
        # Named ops without maps: fill / copy / transpose / broadcast iterate over
        # their result; so do element-wise ops whose operands all have its shape.
        t = static_tensor_type(op.results[0]) if op.results else None
        if t is None:
            return None
        if op.name in ("linalg.fill", "linalg.copy", "linalg.transpose", "linalg.broadcast"):
            return list(t.shape)
        shapes = {tuple(static_tensor_type(v).shape) for v in operands if static_tensor_type(v) is not None}
        if shapes == {tuple(t.shape)}:
            return list(t.shape)
        return None
    n = maps[0].n_dims
    ranges = [None] * n
    for value, amap in zip(operands, maps):
        t = static_tensor_type(value)
        if t is None:
            try:
                ir.RankedTensorType(value.type)
                return None  # dynamic
            except ValueError:
                continue  # scalar operand
        for size, expr in zip(t.shape, amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                ranges[ir.AffineDimExpr(expr).position] = size
    if any(r is None for r in ranges):
        return None
    return ranges



__all__ = ["horizontal_reductions", "reduces_trailing_loops", "schedule_rows", "static_loop_ranges"]
