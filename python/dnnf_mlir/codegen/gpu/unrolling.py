"""Which loops of a thread the GPU schedule unrolls: the innermost ones of a few
constant iterations (a register tile's rows), tagged here and unrolled by
``schedule.vectorize``.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..transform_script import TAG

UNROLL = 4  # the most iterations of a thread's innermost loop that are unrolled
# on a loop over a matmul thread's rows (``schedule``), unrolled up to ``GpuDevice.matmul_rows``
REGISTER_ROWS_ATTR = "dnnf.gpu.register_rows"


def _constant(value):
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant" or not isinstance(value.type, ir.IndexType):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def mark_unrolled_loops(module, matmul_rows: int = UNROLL) -> list:
    """Tag (``TAG`` ``unrolled_tag(n)``) each innermost ``scf.for`` of ``n`` <= ``UNROLL``
    constant iterations, or ``n`` <= ``matmul_rows`` for a loop over a matmul thread's rows
    (``REGISTER_ROWS_ATTR``: in its reduction loop and in its epilogue after it; never
    the reduction loop itself), innermost or around one loop over its two vec4s of
    columns (unrolled first: smaller trip counts go first): a thread's rows of its register
    tile, unrolled, are read and written at constant offsets, which ``vectorize`` then
    keeps in registers across the reduction loop around them (a loop-invariant subset)
    instead of a private array indexed at run time (spilled to memory on a GPU,
    gathered per lane on lavapipe). Returns the trip counts tagged."""
    trips = set()
    for loop in walk_ops(module.operation, {"scf.for"}):
        nested = walk_ops(loop, {"scf.for"})
        if nested != [loop] and not (REGISTER_ROWS_ATTR in loop.attributes and len(nested) == 2):
            continue  # not innermost, nor a thread's rows around its vec4s of columns
        bounds = [_constant(v) for v in list(loop.operands)[:3]]
        if None in bounds or bounds[2] <= 0:
            continue
        count = -(-(bounds[1] - bounds[0]) // bounds[2])
        if 1 < count <= (max(UNROLL, matmul_rows) if REGISTER_ROWS_ATTR in loop.attributes else UNROLL):
            loop.attributes[TAG] = ir.StringAttr.get(unrolled_tag(count))
            trips.add(count)
    return sorted(trips)


def unrolled_tag(count: int) -> str:
    """The ``TAG`` of a loop of ``count`` iterations to unroll."""
    return f"unroll{count}"


__all__ = ["REGISTER_ROWS_ATTR", "UNROLL", "mark_unrolled_loops", "unrolled_tag"]
