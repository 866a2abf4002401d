"""Before bufferization: ops that CSE made share one ``tensor.empty`` get one each.

An op inside a recurrence's loop over its time steps (an ``scf.for`` marked
``TIME_STEPS``) that uses a ``tensor.empty`` defined outside the loop gets an empty
tensor of its own, made in the loop (``fresh_inits_in_loops``); so does each tile
written into a slice of an empty tensor and inserted back (``fresh_inits_of_slices``).

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
from ..linalg_queries import linalg_init, static_slice


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


# How a tile's value goes back to the tensor it was written into: the result of each
# of these ops is (an update of) this operand.
_DESTINATION = {"vector.transfer_write": lambda op, _: op.operands[1],
                "tensor.insert_slice": lambda op, _: op.operands[1],
                "scf.for": lambda op, index: op.operands[3 + index]}


def _written_slice(value, depth: int = 8):
    """(the ``tensor.extract_slice`` that ``value`` was written into, through writes,
    inserts, loops and linalg inits, and the op that used it), or None."""
    user = None
    while depth > 0 and isinstance(value, ir.OpResult):
        op = value.owner
        if op.name == "tensor.extract_slice":
            return (op, user) if user is not None else None
        if op.name in _DESTINATION:
            user, value = op, _DESTINATION[op.name](op, value.result_number)
        elif op.name.startswith("linalg.") and len(op.results) == 1:
            user, value = op, linalg_init(op)
        else:
            return None
        depth -= 1
    return None


def fresh_inits_of_slices(module: ir.Module) -> int:
    """Give each tile written into a slice of a shared ``tensor.empty`` and inserted back
    into it at the same place an empty tensor of its own.

    A tile loop with one iteration (a whole tile before a peeled partial one:
    ``matmul.py``) folds into ``insert_slice(tile(extract_slice(E)), E)``; when CSE
    made several such chains share ``E`` (matmuls of one kernel with the same result
    shape), one-shot bufferization writes every tile into one buffer and copies it out.
    Returns how many were given one."""
    made = 0
    for insert in walk_ops(module.operation, {"tensor.insert_slice"}):
        empty = insert.operands[1].owner
        if isinstance(empty, ir.Block) or empty.name != "tensor.empty" or len(list(empty.results[0].uses)) < 2:
            continue
        found = _written_slice(insert.operands[0])
        if found is None:
            continue
        extract, user = found
        where = static_slice(insert)
        if extract.operands[0] != empty.results[0] or where is None or static_slice(extract) != where:
            continue
        fresh = empty.clone(ip=ir.InsertionPoint(extract))
        mine = extract.clone(ip=ir.InsertionPoint(extract))
        mine.operands[0] = fresh.results[0]
        for index, operand in enumerate(user.operands):
            if operand == extract.results[0]:
                user.operands[index] = mine.results[0]
        insert.operands[1] = fresh.results[0]
        made += 1
    return made
