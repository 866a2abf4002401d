"""A thread's row writes made in place in the tile they are inserted into.

A matmul that is its kernel's root (a batch matmul with no epilogue, attention's
``Q K^T``) accumulates its thread's rows in registers, then writes each row
(``vector.transfer_write``) into a slice of its tile and inserts it there. The slice
written is taken from the tile as its accumulator's fill left it, before the other
rows' inserts: bufferization sees a slice read from an older version of the tile and
copies the tile into a private array, row by row, after storing the fill (zeros) to
the result. A write that overwrites its whole destination does not read it, so
``rebase_overwrites(module)`` writes it into the slice of the tensor it is inserted
into instead: the extract and insert of one slice of one tensor, which bufferization
does in place (the fill's stores then write the result's rows first, overwritten).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import constant_index


def _zero(value) -> bool:
    return constant_index(value) == 0


def _overwrites_whole(op) -> bool:
    """Whether ``op`` writes every element of the tensor it writes into, so that it does
    not read that tensor: a ``vector.transfer_write`` at index 0, in bounds, no mask, of a
    vector of as many elements as the tensor has; or a ``tensor.insert_slice`` of such a
    whole write as large as its destination (a row written through its unit dims)."""
    if op.name == "tensor.insert_slice":
        source = op.operands[0]
        return (isinstance(source, ir.OpResult) and _overwrites_whole(source.owner)
                and _elements(source.type) == _elements(op.results[0].type))
    if op.name != "vector.transfer_write" or len(op.results) != 1:
        return False
    tensor = ir.RankedTensorType(op.results[0].type)
    in_bounds = [ir.BoolAttr(b).value for b in ir.ArrayAttr(op.attributes["in_bounds"])]
    return (all(in_bounds) and all(_zero(i) for i in list(op.operands)[2:])
            and _elements(op.operands[0].type) == _elements(tensor) and len(op.operands) == 2 + tensor.rank)


def _elements(shaped) -> int:
    return math.prod(ir.ShapedType(shaped).shape)


def rebase_overwrites(module) -> int:
    """For each static ``tensor.insert_slice`` of a whole write (``_overwrites_whole``; one
    use: the insert), make the write's destination the slice of the insert's
    destination it replaces, created right before the insert, outer inserts first;
    returns how many."""
    rebased = 0
    for insert in reversed(walk_ops(module.operation, {"tensor.insert_slice"})):
        source, tile = insert.operands[0], insert.operands[1]
        write = source.owner if isinstance(source, ir.OpResult) else None
        if write is None or len(list(source.uses)) != 1 or len(insert.operands) != 2 or not _overwrites_whole(write):
            continue  # dynamic offsets or sizes: left alone
        destination = write.operands[1]
        owner = destination.owner if isinstance(destination, ir.OpResult) else None
        if owner is not None and owner.name == "tensor.extract_slice" and owner.operands[0] == tile:
            continue  # already the insert's own slice
        with ir.InsertionPoint(insert), insert.location:
            own = _mlir.tensor.extract_slice(source.type, tile, [], [], [], _static(insert, "offsets"),
                                             _static(insert, "sizes"), _static(insert, "strides"))
        write.move_before(insert)
        write.operands[1] = own
        rebased += 1
    return rebased


def _static(op, name: str) -> list:
    return list(ir.DenseI64ArrayAttr(op.attributes[f"static_{name}"]))


__all__ = ["rebase_overwrites"]
