"""The plan of ``linalg.conv_2d_nchw_fchw`` (f32), whose steps are the transform
library ``lowering/cpu/conv.mlir``.

``convolutions.pad_convolutions`` first widens the output width to whole vectors;
this computes what depends on the shapes and the target: the zero-padded input
materialized once (``bufferize_to_allocation``), the thread split (output channels
first), the register tile (FR channels x one row x WV columns), which window loops
are unrolled.
"""

from __future__ import annotations

from ..._mlir import ir
from ..kernel_plan import OpSchedule, Planner
from ..linalg_queries import static_tensor_type
from .rows import schedule_rows
from .tiles import conv_vector_tile, even_split

LIBRARY = "cpu/conv.mlir"


def schedule_conv(planner: Planner, op):
    s = planner.script
    inp, w = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1])
    out = static_tensor_type(op.results[0])
    if inp is None or w is None or out is None:
        return schedule_rows(planner, op)
    nb, f, oh, ow = out.shape
    _, c, kh, kw = w.shape
    tag = planner.new_tag(op)
    fr, wv, padded = conv_vector_tile(ow, f, planner.target)
    if padded != ow:  # pad_convolutions did not apply (e.g. not enough input)
        return schedule_rows(planner, op)
    details = dict(register_tile=(fr, wv))
    h = s.match([op.name], tag=tag)
    # Materialize the zero-padded input once: tiling would otherwise fuse the pad
    # into every tile as a (dynamic, scalar) pad of a slice.
    h, isolated = planner.isolate_operands(op, h, [0, 1, 2])
    if isolated:
        details["padded_input"] = True
    init = op.operands[2]
    fill = s.producer_of(h, 2) if isinstance(init, ir.OpResult) and init.owner.name == "linalg.fill" else None
    if planner.threads > 1:
        # Output channels first (each thread reads half of the weights), then rows,
        # then images; only even splits (static tiles in every thread).
        tiles = [nb, f // fr, oh]
        dim = even_split(tiles, [1, 2, 0], planner.threads)
        if dim is None:
            details["threads"] = 1
        else:
            sizes = [0, 0, 0, 0, 0, 0, 0]
            sizes[dim] = tiles[dim] // planner.threads * [1, fr, 1][dim]
            h, forall = s.tile_forall(h, sizes)
            if fill is not None:
                s.fuse_into(fill, forall)
            details["forall"] = sizes
    h, tiles = s.include(LIBRARY, "__dnnf_conv2d_register_tiles", [h], [fr, wv], results=2)
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
    planner.cleanup()
    planner.add_schedule(OpSchedule(tag, op.name, tuple(out.shape) + (c, kh, kw), "conv2d", details))

__all__ = ["schedule_conv"]
