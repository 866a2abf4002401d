"""The plan of ``linalg.conv_2d_nchw_fchw`` (f32), whose steps are the transform
library ``lowering/cpu/conv.mlir``.

``convolutions.pad_convolutions`` first widens the output width to whole vectors;
this computes what depends on the shapes and the target: the zero-padded input
materialized once (``bufferize_to_allocation``), the thread split (output channels
first), the register tile (FR channels x one row x WV columns), whether the tiles go
row by row (a flat row, ``flat_conv_rows``, column tile by column tile) where the
input leaves L2 (``tiles.conv_rows_outer``), which window loops
are unrolled, and whether an element-wise consumer (bias, activation, residual add;
``epilogues.py`` moves it into the widened shape) becomes the root of the tiling,
applied to the accumulators before the single store. A strided convolution's phases
(``convolutions.split_strided_convolutions``) share the register tiles of the last one,
whose partial last column tile is peeled rather than padded where it is at most a
vector (``tiles.peeled_conv_columns``).
"""

from __future__ import annotations

import math

from ..kernel_plan import OpSchedule
from .cpu_planner import CpuPlanner
from ..linalg_queries import accumulator_fill, only_user, producer, static_tensor_type
from .rows import schedule_rows
from .tiles import conv_rows_outer, conv_vector_tile, even_split, peeled_conv_columns

LIBRARY = "cpu/conv.mlir"
MATMUL_LIBRARY = "cpu/matmul.mlir"  # its loop peeling, for a flat row's column tiles


def accumulated_convolutions(op) -> list:
    """The convolutions that accumulate into ``op``'s accumulator, first to last, ``op``
    included: a strided convolution's phases (``convolutions.split_strided_convolutions``),
    each one's result the init of the next and used by it only."""
    chain = [op]
    while True:
        init = producer(chain[0].operands[2])
        if init is None or init.name != op.name or only_user(init.results[0]) != chain[0]:
            return chain
        chain.insert(0, init)


def feeds_accumulated_convolution(op) -> bool:
    """Whether ``op`` is a phase that a later convolution's schedule computes in its tiles
    (``accumulated_convolutions``), rather than a convolution scheduled on its own."""
    user = only_user(op.results[0]) if op.results else None
    return op.name == "linalg.conv_2d_nchw_fchw" and user is not None and user.name == op.name \
        and user.operands[2] == op.results[0]


def schedule_conv(planner: CpuPlanner, op, epilogue=None) -> bool:
    """Schedule a convolution, with the phases accumulated before it in the same register
    tiles (``accumulated_convolutions``: the accumulators stay in registers from one
    phase to the next instead of a store and a load of the whole output per phase);
    returns whether ``epilogue`` (an element-wise linalg.generic consuming its result)
    was fused into its tiles."""
    s = planner.script
    chain = accumulated_convolutions(op)
    inp, w = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1])
    out = static_tensor_type(op.results[0])
    if inp is None or w is None or out is None:
        for conv in chain:
            schedule_rows(planner, conv)
        return False
    nb, f, oh, ow = out.shape
    tag = planner.new_tag(op)
    fr, wv, padded = conv_vector_tile(ow, f, planner.target)
    peeled = peeled_conv_columns(ow, f, planner.target) if len(chain) > 1 else 0
    if padded != ow and not peeled:  # pad_convolutions did not apply (e.g. not enough input)
        for conv in chain:
            schedule_rows(planner, conv)
        return False
    details = dict(register_tile=(fr, wv))
    if len(chain) > 1:
        details["phases"] = len(chain)
    # Materialize the zero-padded input once: tiling would otherwise fuse the pad
    # into every tile as a (dynamic, scalar) pad of a slice.
    handles = []
    for index, conv in enumerate(chain):
        h = s.match([conv.name], tag=planner.new_tag(conv))
        h, isolated = planner.isolate_operands(conv, h, [0, 1, 2] if index == 0 else [0, 1])
        if isolated:
            details["padded_input"] = True
        handles.append(h)
    h = handles[-1]
    root, _, etag = planner.contraction_root(op, h, epilogue, details)
    fill = s.producer_of(handles[0], 2) if accumulator_fill(chain[0]) is not None else None
    if planner.threads > 1:
        # Output channels first (each thread reads half of the weights), then rows,
        # then images, then the column tiles of one flat row (``flat_conv_rows``);
        # only even splits (static tiles in every thread).
        tiles = [nb, f // fr, oh, padded // wv if oh == 1 and not peeled else 0]
        dim = even_split(tiles, [1, 2, 0, 3], planner.threads)
        if dim is None:
            details["threads"] = 1
        else:
            sizes = [0, 0, 0, 0] if epilogue is not None else [0, 0, 0, 0, 0, 0, 0]
            sizes[dim] = tiles[dim] // planner.threads * [1, fr, 1, wv][dim]
            root, forall = s.tile_forall(root, sizes)
            producers = handles[::-1] if epilogue is not None else handles[-2::-1]
            for producer_handle in producers + ([fill] if fill is not None else []):
                _, forall = s.fuse_into(producer_handle, forall)
            details["forall"] = sizes
    # A flat row (``flat_conv_rows``) goes by its column tiles as an image by its rows.
    rows, step = (oh, [0, 0, 1, 0]) if oh > 1 else (padded // wv, [0, 0, 0, wv])
    outer = None
    if conv_rows_outer(_input_bytes(chain), sum(_bytes(conv.operands[1]) for conv in chain), f // fr, rows):
        # One output row (or column tile) at a time (the register tiles inside): its
        # input stays in cache for every channel block, the filters stream once per row.
        root, (outer,) = s.fuse(root, step if epilogue is not None else step + [0, 0, 0])
        details["rows_outer"] = True
    kind = "register_tiles" if epilogue is None else "epilogue_register_tiles"
    tiled, tiles = s.include(LIBRARY, f"__dnnf_conv2d_{kind}", [root], [fr, wv], results=2)
    if peeled:
        # The last column tile as a loop of its own, static once canonicalized; the
        # tiles are then found in the whole function (the peeled loop of one
        # iteration may be folded away).
        func = s.parent_func(tiles)
        if oh == 1 and outer is not None:
            # A flat row's column tiles outer: its last one is the partial one.
            s.include(MATMUL_LIBRARY, "__dnnf_peel_partial_tile", [outer], results=2)
        else:
            s.include(LIBRARY, "__dnnf_conv2d_peel_partial_columns", [tiled], results=2)
        s.canonicalize(func)
        tiles = func
        details["peeled_columns"] = peeled
    unrolled = [_vectorized_steps(planner, conv, tiles) for conv in chain]
    if any(unrolled):
        details["unrolled"] = unrolled[0] if len(chain) == 1 else unrolled
    if epilogue is not None:
        s.vectorize(s.match([epilogue.name], within=tiles, tag=etag))
        s.patterns(tiles, ["tensor.fold_tensor_subset_ops_into_vector_transfers", "canonicalization"])
    planner.cleanup()
    c, kh, kw = w.shape[1:]
    planner.add_schedule(OpSchedule(tag, op.name, tuple(out.shape) + (c, kh, kw), "conv2d", details))
    return epilogue is not None


def _bytes(value) -> int:
    """Bytes of a statically shaped f32 tensor."""
    return 4 * math.prod(static_tensor_type(value).shape)


def _input_bytes(chain) -> int:
    """Bytes of the inputs ``chain`` reads, each tensor its inputs are slices of counted
    once: a flat row's window rows (``flat_conv_rows``) overlap in one buffer, a strided
    convolution's phases are one split."""
    sources = []
    for conv in chain:
        value = conv.operands[0]
        owner = producer(value)
        if owner is not None and owner.name == "tensor.extract_slice":
            value = owner.operands[0]
        if value not in sources:
            sources.append(value)
    return sum(_bytes(value) for value in sources)


def _vectorized_steps(planner: CpuPlanner, conv, tiles: str) -> list:
    """The reduction steps of ``conv``, tiled with ``tiles``, vectorized one at a time;
    returns the trip counts of the window loops unrolled (kw up to 8, kh too for windows
    up to 3x3)."""
    s = planner.script
    tag = planner.new_tag(conv)
    _, _, kh, kw = static_tensor_type(conv.operands[1]).shape
    h = s.match([conv.name], within=tiles, tag=tag)
    _, kh_loop, kw_loop = s.include(LIBRARY, "__dnnf_conv2d_reduction_steps", [h], results=3)
    unrolled = []
    if 1 < kw <= 8:
        unrolled.append((kw_loop, kw))
    if 1 < kh and kh * kw <= 9:
        unrolled.append((kh_loop, kh))
    for loop, trip in unrolled:
        s.unroll(loop, trip)
    s.include(LIBRARY, "__dnnf_conv2d_vectorize", [s.match([conv.name], tag=tag, within=tiles), tiles])
    return [trip for _, trip in unrolled]

__all__ = ["accumulated_convolutions", "feeds_accumulated_convolution", "schedule_conv"]
