"""How many loop iterations one GPU thread runs, against a device's budget of them.

lavapipe (llvmpipe) gives each invocation one counter of 65535 loop iterations, shared
by all its loops, nested or one after another, and ends every loop of the invocation
once it runs out, silently (measured with a shader of its own: loops of 40000 and then
40000 iterations ran 40000 and 25534; 300 x 300 nested ones 217 x 300). Splitting a
loop into nested ones does not help; fewer iterations per thread do.
``GpuDevice.max_loop_iterations`` is that budget (Vulkan profiles: every profile's code
may run on lavapipe). ``loop_iterations`` counts a thread's iterations from the loops'
constant trip counts (a thread's tile loop to ``min(rest, C)``: C, the first thread's),
as a lower bound of its worst thread's: a loop whose trip count is not a constant
(TopK's insertions, which depend on the data) counts nothing, nor does a short loop's
own iteration (the driver may unroll it), so that only a thread that surely runs out
is refused (``check_loop_iterations``) or split (``loop_kernels.single_invocations``).
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..errors import CodegenError
from ..linalg_queries import constant_index

# The trip counts up to which Mesa's NIR may unroll a loop (its iterations then cost no
# count; its inner loops still do, once per iteration).
UNROLLED_TRIPS = 32


def _trips(lower: int | None, upper: int | None, step: int | None) -> int | None:
    if None in (lower, upper, step) or step <= 0:
        return None
    return max(0, -(-(upper - lower) // step))


def trip_count(loop) -> int | None:
    """The iterations of the ``scf.for`` ``loop`` when its bounds and step are constants."""
    return _trips(*(constant_index(v) for v in list(loop.operands)[:3]))


def _tile_trips(loop) -> int | None:
    """``trip_count``, or for a loop from a constant to ``min(x, C)`` (a thread's tile of
    C, the last one shorter) C's trips: what the first thread runs."""
    lower, upper, step = list(loop.operands)[:3]
    bound = constant_index(upper)
    if bound is None and isinstance(upper, ir.OpResult):
        bound = _constant_of_min(upper.owner)
    return _trips(constant_index(lower), bound, constant_index(step))


def _constant_of_min(op) -> int | None:
    """The constant operand of an ``arith.minsi`` / ``minui``, or constant result of an ``affine.min``."""
    if op.name in ("arith.minsi", "arith.minui"):
        constants = [constant_index(v) for v in op.operands if constant_index(v) is not None]
    elif op.name == "affine.min":
        constants = [e.value for e in ir.AffineMapAttr(op.attributes["map"]).value.results
                     if isinstance(e, ir.AffineConstantExpr)]
    else:
        return None
    return min(constants) if constants else None


def loop_iterations(op, unrolled_trips: int = UNROLLED_TRIPS) -> int:
    """A lower bound of the loop iterations one thread runs in ``op``'s regions: ops in
    sequence add up, except ``scf.if``s, of which the costliest counts (the groups of a
    launch are a chain of them, a workgroup taking one), an ``scf.if`` takes its
    costlier branch, a loop of constant trip count multiplies its body's by that count
    (plus one per iteration past ``unrolled_trips``: 0 counts every iteration)."""
    branches = []
    for region in op.regions:
        for block in region.blocks:
            costs = [(inner.operation.name == "scf.if", _op_iterations(inner, unrolled_trips))
                     for inner in block.operations]
            branches.append(sum(c for branch, c in costs if not branch) +
                            max((c for branch, c in costs if branch), default=0))
    if op.name == "scf.if":
        return max(branches, default=0)
    return sum(branches)


def _op_iterations(op, unrolled_trips: int) -> int:
    op = op.operation
    if op.name != "scf.for":
        return loop_iterations(op, unrolled_trips)
    trips = _tile_trips(op)
    if trips is None:
        return 0
    return trips * (loop_iterations(op, unrolled_trips) + (1 if trips > unrolled_trips else 0))


def check_loop_iterations(function, name: str, device):
    """A ``CodegenError`` when a thread of a launch of ``function`` runs more loop
    iterations than ``device.max_loop_iterations`` (None: no budget)."""
    budget = device.max_loop_iterations
    if budget is None:
        return
    for index, launch in enumerate(walk_ops(function.operation, {"gpu.launch"})):
        iterations = loop_iterations(launch)
        if iterations > budget:
            raise CodegenError(f"{name}: a thread of its launch {index} runs {iterations} loop iterations; the "
                               f"device profile {device.name} allows {budget} a thread (lavapipe ends a thread's "
                               f"loops there, silently)")


__all__ = ["UNROLLED_TRIPS", "check_loop_iterations", "loop_iterations", "trip_count"]
