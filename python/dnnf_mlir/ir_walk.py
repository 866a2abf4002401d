"""Finding ops in an IR tree and ordering them.

``walk_ops`` collects the ops a rewrite is about to change before it changes any: a
walk must not meet the ops the rewrite inserts or erases. The block helpers answer
"which comes first" for rewrites that move or reuse values along a block.
"""

from ._mlir import ir


def walk_ops(root, names) -> list:
    """The ops under the operation ``root`` whose name is in ``names``, in program order
    (nested ones after the op that holds them)."""
    found = []

    def visit(op):
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def block_positions(block) -> dict:
    """Each op of ``block`` (as ``ir.Operation``) by its index, in one pass: a rewrite
    asking for many positions must not scan the block per question."""
    return {op.operation: index for index, op in enumerate(block.operations)}


def comes_before(first, second) -> bool:
    """Whether the op ``first`` comes before the op ``second`` of the same block (one
    scan, stopping at whichever comes first: for a single question)."""
    first, second = first.operation, second.operation
    for op in second.block.operations:
        if op.operation == second:
            return False
        if op.operation == first:
            return True
    return False


def ancestor_in_block(op, block):
    """``op`` or its ancestor whose block is ``block``, else None."""
    op = op.operation
    while op is not None and op.block != block:
        parent = op.parent
        op = parent.operation if parent is not None and parent.name != "builtin.module" else None
    return op


__all__ = ["ancestor_in_block", "block_positions", "comes_before", "walk_ops"]
