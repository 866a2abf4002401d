"""The ops of an IR tree that a rewrite is about to change, collected before it changes
any: a walk must not meet the ops the rewrite inserts or erases."""

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


__all__ = ["walk_ops"]
