"""The schedule of ``linalg.conv_2d_nchw_fchw`` (f32).

``convolutions.pad_convolutions`` first widens the output width to whole vectors;
then the zero-padded input is materialized once (``bufferize_to_allocation``),
threads split output channels, register tiles of FR channels x one row x WV columns,
unit reduction steps with the KHxKW window unrolled, ``decompose`` to
``conv_1d_ncw_fcw`` and ``vectorize``.
"""

from __future__ import annotations

from ..._mlir import ir
from ..kernel_plan import Kernel, Planner
from ..linalg_queries import static_tensor_type
from .rows import schedule_rows
from .tiles import conv_vector_tile, even_split


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
    # Register tile: FR output channels x one row x WV columns; f outer so that the
    # weights of a channel block stay in cache while the rows stream.
    h, loops = s.fuse(h, [1, fr, 1, wv, 0, 0, 0], [0, 1, 2, 3])
    # Reductions one step at a time, c outermost: the 3x3 window of one input plane
    # is reused from L1 by the kh / kw steps.
    h, red = s.tile_for(h, [0, 0, 0, 0, 1, 1, 1])
    # Unroll the window (kw, and kh for windows up to 3x3): one straight run of
    # FMA groups per input channel instead of two short loops (~+10%).
    unrolled = []
    if 1 < kw <= 8:
        unrolled.append((red[2], kw))
    if 1 < kh and kh * kw <= 9:
        unrolled.append((red[1], kh))
    for loop, trip in unrolled:
        s.emit(f"transform.loop.unroll {loop} {{factor = {trip}}} : !transform.any_op")
    if unrolled:
        h = s.match([op.name], tag=tag, within=loops[0])
        details["unrolled"] = [trip for _, trip in unrolled]
    h = s.decompose(h)  # conv_2d with unit OH/KH -> conv_1d_ncw_fcw
    s.vectorize(h)
    fills = s.match(["linalg.fill"], within=loops[0])
    planner.vectorize_fills(fills)
    # On this kernel's loops only (before the hoisting of ``finish``; the matmuls'
    # contractions must not see them).
    s.patterns(loops[0], ["vector.reduction_to_contract", "vector.transfer_permutation_patterns"])
    planner.cleanup()
    planner.add_kernel(Kernel(tag, op.name, tuple(out.shape) + (c, kh, kw), "conv2d", details))



__all__ = ["schedule_conv"]
