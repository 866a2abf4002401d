"""The schedule of a weighted gather (``ecg.gather_sum``, GridSample's taps): rows of
channels, the tap loop inside each row.

Its generic's loops are (tap, q..., channel), the tap a reduction that reads a row of
``data`` chosen by an index. The rows schedule would vectorize the taps whole, and a
vector across taps reads a different row per lane: a ``vector.gather`` of single
elements. Here every parallel dim but the channels is tiled to 1, the channels to a row
of up to four vectors, and the tap loop, innermost, to 1: each tap is then one
contiguous row load (its index read once) multiplied by a broadcast weight into the
row's accumulators, which stay in registers across the taps (``CpuPlanner.finish``
hoists them), stored once.
"""

from __future__ import annotations

import math

from ...ir_walk import walk_ops
from ..kernel_plan import OpSchedule
from ..linalg_queries import element_bits, linalg_init, parallel_loops, producer, static_tensor_type
from .cpu_planner import CpuPlanner
from .rows import static_loop_ranges
from .tiles import PARALLEL_MIN_ELEMENTS


def is_gather_sum(op) -> bool:
    """A generic whose only reduction is its first loop and whose body extracts from a tensor."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    loops = parallel_loops(op)
    if not loops or len(loops) < 2 or loops[0] or not all(loops[1:]):
        return False
    return bool(walk_ops(op, {"tensor.extract"}))


def zero_fill(op):
    """The ``linalg.fill`` that initializes the gather sum ``op``'s accumulator, if one does
    (fused into its rows)."""
    init = producer(linalg_init(op))
    return init if init is not None and init.name == "linalg.fill" else None


def schedule_gather_sum(planner: CpuPlanner, op):
    """Rows of up to four vectors, the tap loop innermost (see the module doc)."""
    s = planner.script
    ranges = static_loop_ranges(op)
    out = static_tensor_type(op.results[0])
    tag = planner.new_tag(op)
    rank = len(ranges)
    width = min(ranges[-1], 4 * planner.target.lanes(element_bits(out)))
    h = s.match([op.name], tag=tag)
    details = {}
    if planner.threads > 1 and math.prod(ranges[1:]) >= PARALLEL_MIN_ELEMENTS:
        outer = next((d for d in range(1, rank - 1) if ranges[d] >= planner.threads), None)
        if outer is not None:
            split = [0] * rank
            split[outer] = math.ceil(ranges[outer] / planner.threads)
            h, _ = s.tile_forall(h, split)
            details["forall"] = split
    # Rows first, the fill fused into each (structured.fuse takes the untiled producers:
    # only the fill, the others were tiled before, in program order), then the taps of a
    # row: a loop inside it, out of the fill's reach.
    row, loops = s.fuse(h, [0] + [1] * (rank - 2) + [width])
    tiled, _ = s.tile_for(row, [1] + [0] * (rank - 1))
    vector = [1] * (rank - 1) + [width]
    s.vectorize(tiled, vector)
    planner.vectorize_fills(s.match(["linalg.fill"], within=loops[0]))
    planner.cleanup()
    details["vector"] = vector
    planner.add_schedule(OpSchedule(tag, op.name, tuple(ranges), "gather_sum", details))


__all__ = ["is_gather_sum", "schedule_gather_sum", "zero_fill"]
