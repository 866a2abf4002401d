"""Before bufferization: an op inside a recurrence's loop over its time steps (an
``scf.for`` marked ``TIME_STEPS``) that uses a ``tensor.empty`` defined outside the loop
gets an empty tensor of its own, made in the loop.

CSE merges identical ``tensor.empty`` ops, so an op of a recurrence's loop over its
time steps can end up writing its result into the empty tensor that a value computed
before the loop (R^T, read by every step) was written into. One-shot bufferization
then gives both one buffer, as if the loop ran once: the second step read an R^T
overwritten by the first step's masked state (a GRU of batch 17, found by the fuzzer).
With an empty tensor of its own the op gets its own buffer (``buffer-loop-hoisting``
moves that allocation out of the loop again). The code generator's tile loops are left
as they are: their packing buffers are meant to be shared by the iterations.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_time_step_loop


def _nested_ops(loop) -> list:
    found = []

    def visit(op):
        if op != loop:
            found.append(op)
        return ir.WalkResult.ADVANCE

    loop.walk(visit)
    return found


def fresh_inits_in_loops(module: ir.Module) -> int:
    """Give each use inside a time-step loop of a tensor.empty from outside it its own
    copy of that tensor.empty, made right before the user. Returns how many were made."""
    made = 0
    for loop in filter(is_time_step_loop, walk_ops(module.operation, {"scf.for"})):
        inside = _nested_ops(loop)
        for user in inside:
            for index, operand in enumerate(user.operands):
                owner = operand.owner
                if isinstance(owner, ir.Block) or owner.name != "tensor.empty" or owner in inside:
                    continue
                clone = owner.clone(ip=ir.InsertionPoint(user))
                user.operands[index] = clone.results[0]
                made += 1
    return made
