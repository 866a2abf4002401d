"""Before bufferization: each reader of a ``bufferization.to_buffer`` gets a
``to_buffer`` of its own, made right before it.

The schedule materializes a matmul's padded operand with
``structured.bufferize_to_allocation``: ``to_buffer`` of the source, then a
``linalg.copy`` from that memref into the padded buffer. CSE then merges the
``to_buffer`` ops of two matmuls that read one tensor (two convolutions' im2col
matmuls over the same patches), so the second copy reads the memref made at the first.
One-shot bufferization sees a tensor read only where a ``to_buffer`` is: after the first
copy it took the tensor's buffer for dead and let an op writing into the same (CSE'd)
``tensor.empty`` overwrite it in place, and the second copy read the other op's values
(six ConvTransposes in one module, each right alone). A ``to_buffer`` whose one reader
is further on (in a loop) misleads it the same way. With a ``to_buffer`` right before
each reader, every read is where the analysis looks.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops


def to_buffer_per_reader(module: ir.Module) -> int:
    """Give each use of a ``bufferization.to_buffer`` result a copy of that op made
    right before its user (``structured.bufferize_to_allocation``'s copies read it
    directly, not through a view), erasing the shared one. Returns how many were made."""
    made = 0
    for op in walk_ops(module.operation, {"bufferization.to_buffer"}):
        for user, index in [(use.owner, use.operand_number) for use in op.results[0].uses]:
            clone = op.clone(ip=ir.InsertionPoint(user))
            user.operands[index] = clone.results[0]
            made += 1
        op.erase()
    return made


__all__ = ["to_buffer_per_reader"]
