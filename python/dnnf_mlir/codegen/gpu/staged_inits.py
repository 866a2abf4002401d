"""A staged op's accumulator allocated in its workgroup: the schedule's loops over
threads write staged values into tensors that bufferization must place in the
workgroup's (shared) memory, one per workgroup, not in one buffer of the function."""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir


def own_empty_init(op):
    """The empty tensor ``op`` (a staged op in its workgroup's loop) writes into, through
    the ops initializing it, made one of the loop's own: bufferization then allocates
    it in the loop, in the workgroup's memory, not as one buffer of the function that
    every workgroup's threads would share (through which a barrier does not order)."""
    forall = op.parent
    while op.operands and op.name.startswith("linalg."):
        index = len(op.operands) - 1
        value = op.operands[index]
        owner = value.owner.operation if isinstance(value, ir.OpResult) else None
        if owner is not None and owner.name.startswith("linalg.") and owner.parent == forall:
            op = owner
            continue
        if owner is None or owner.name != "tensor.empty" or owner.parent != forall:
            with ir.InsertionPoint(op), op.location:
                op.operands[index] = _mlir.tensor.empty(ir.RankedTensorType(value.type).shape,
                                                        ir.RankedTensorType(value.type).element_type)
        return


__all__ = ["own_empty_init"]
