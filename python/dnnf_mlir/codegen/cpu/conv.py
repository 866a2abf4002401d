"""The plan of ``linalg.conv_2d_nchw_fchw`` (f32), whose steps are the transform
library ``lowering/cpu/conv.mlir``.

``convolutions.pad_convolutions`` first widens the output width to whole vectors;
this computes what depends on the shapes and the target: the zero-padded input
materialized once (``bufferize_to_allocation``), the thread split (output channels
first), the register tile (FR channels x one row x WV columns), which window loops
are unrolled, and whether an element-wise consumer (bias, activation, residual add;
``epilogues.py`` moves it into the widened shape) becomes the root of the tiling,
applied to the accumulators before the single store.
"""

from __future__ import annotations

from ..kernel_plan import OpSchedule
from .cpu_planner import CpuPlanner
from ..linalg_queries import static_tensor_type
from .rows import schedule_rows
from .tiles import conv_vector_tile, even_split

LIBRARY = "cpu/conv.mlir"


def schedule_conv(planner: CpuPlanner, op, epilogue=None) -> bool:
    """Schedule a convolution; returns whether ``epilogue`` (an element-wise
    linalg.generic consuming its result) was fused into its tiles."""
    s = planner.script
    inp, w = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1])
    out = static_tensor_type(op.results[0])
    if inp is None or w is None or out is None:
        schedule_rows(planner, op)
        return False
    nb, f, oh, ow = out.shape
    _, c, kh, kw = w.shape
    tag = planner.new_tag(op)
    fr, wv, padded = conv_vector_tile(ow, f, planner.target)
    if padded != ow:  # pad_convolutions did not apply (e.g. not enough input)
        schedule_rows(planner, op)
        return False
    details = dict(register_tile=(fr, wv))
    h = s.match([op.name], tag=tag)
    # Materialize the zero-padded input once: tiling would otherwise fuse the pad
    # into every tile as a (dynamic, scalar) pad of a slice.
    h, isolated = planner.isolate_operands(op, h, [0, 1, 2])
    if isolated:
        details["padded_input"] = True
    root, fill, etag = planner.contraction_root(op, h, epilogue, details)
    if planner.threads > 1:
        # Output channels first (each thread reads half of the weights), then rows,
        # then images; only even splits (static tiles in every thread).
        tiles = [nb, f // fr, oh]
        dim = even_split(tiles, [1, 2, 0], planner.threads)
        if dim is None:
            details["threads"] = 1
        else:
            sizes = [0, 0, 0, 0] if epilogue is not None else [0, 0, 0, 0, 0, 0, 0]
            sizes[dim] = tiles[dim] // planner.threads * [1, fr, 1][dim]
            root, forall = s.tile_forall(root, sizes)
            if epilogue is not None:
                _, forall = s.fuse_into(h, forall)
            if fill is not None:
                s.fuse_into(fill, forall)
            details["forall"] = sizes
    if epilogue is None:
        h, tiles = s.include(LIBRARY, "__dnnf_conv2d_register_tiles", [root], [fr, wv], results=2)
    else:
        _, tiles = s.include(LIBRARY, "__dnnf_conv2d_epilogue_register_tiles", [root], [fr, wv], results=2)
        h = s.match([op.name], within=tiles, tag=tag)
    _, kh_loop, kw_loop = s.include(LIBRARY, "__dnnf_conv2d_reduction_steps", [h], results=3)
    # The window is unrolled whole: kw up to 8, kh too for windows up to 3x3.
    unrolled = []
    if 1 < kw <= 8:
        unrolled.append((kw_loop, kw))
    if 1 < kh and kh * kw <= 9:
        unrolled.append((kh_loop, kh))
    for loop, trip in unrolled:
        s.unroll(loop, trip)
    if unrolled:
        details["unrolled"] = [trip for _, trip in unrolled]
    s.include(LIBRARY, "__dnnf_conv2d_vectorize", [s.match([op.name], tag=tag, within=tiles), tiles])
    if epilogue is not None:
        s.vectorize(s.match([epilogue.name], within=tiles, tag=etag))
        s.patterns(tiles, ["tensor.fold_tensor_subset_ops_into_vector_transfers", "canonicalization"])
    planner.cleanup()
    planner.add_schedule(OpSchedule(tag, op.name, tuple(out.shape) + (c, kh, kw), "conv2d", details))
    return epilogue is not None

__all__ = ["schedule_conv"]
