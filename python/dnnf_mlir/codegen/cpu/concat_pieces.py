"""A concatenation's pieces computed in place, each in its slice of the result.

A SqueezeNet fire module ends in ``concat(relu(conv1x1(s) + b), relu(e3))``: lowered as
it comes, each piece is computed into a buffer of its own and the concat copies both
into the result, two more passes over 128x55x55 floats with 55-float rows (the 1x1
expand kernel took 0.16 ms where its convolution alone takes 0.04). Here, before
scheduling, a concatenation whose piece is computed by a linalg op into an empty
tensor (directly or through reshapes, an epilogue collapsed to rows) becomes
``tensor.insert_slice`` of each piece into one new tensor, the op writing into that
slice (reshaped as its result is) instead of its empty tensor; one-shot bufferization
then computes the piece in place. Other pieces (a kernel's argument, an op that
accumulates into its init) are inserted, that is copied, as the concat copied them.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import comes_before, walk_ops
from ...linalg_builders import insert_at, slice_at
from ..linalg_queries import TENSOR_RESHAPES, linalg_init, producer, reassociation_groups, set_linalg_init, static_tensor_type



def _through_reshapes(value) -> tuple:
    """(the value that ``value`` reshapes, through reshapes; those reshapes, last first)."""
    chain = []
    while producer(value) is not None and producer(value).name in TENSOR_RESHAPES:
        chain.append(producer(value).operation)
        value = producer(value).operands[0]
    return value, chain


def _writes_empty(op) -> bool:
    """``op`` is a single-result linalg op that only writes its init, an empty tensor
    (through reshapes): a generic that reads no ``out`` block argument."""
    if not op.name == "linalg.generic" or len(op.results) != 1:
        return False
    empty, _ = _through_reshapes(linalg_init(op))
    if producer(empty) is None or producer(empty).name != "tensor.empty":
        return False
    block = op.regions[0].blocks[0]
    return not list(block.arguments[len(block.arguments) - 1].uses)


def _slice_reshapes(chain, piece, axis: int) -> bool:
    """Whether a slice of the concat along ``axis`` of ``piece``'s shape can be reshaped
    back through ``chain`` as a view: at most one reshape, and an expanded piece's slice
    collapses only where the concat axis is the first dim of its group that is not a unit
    (the slice's other dims are whole, so each group stays one contiguous run)."""
    if len(chain) > 1:
        return False
    if not chain or chain[0].name == "tensor.collapse_shape":
        return True
    shape = static_tensor_type(piece).shape
    group = next(g for g in reassociation_groups(chain[0]) if axis in g)
    return all(shape[d] == 1 for d in group if d < axis)


def _computing_op(piece, axis: int):
    """The linalg op that ``piece`` is the result of (through a reshape of it read only
    there) and that can write it in place in its slice along ``axis``; else None."""
    value, chain = _through_reshapes(piece)
    if any(len(list(r.results[0].uses)) != 1 for r in chain) or not _slice_reshapes(chain, piece, axis):
        return None
    op = producer(value)
    op = op.operation if op is not None else None
    if op is None or not op.name.startswith("linalg.") or len(list(value.uses)) != 1 or not _writes_empty(op):
        return None
    return op, chain


def _reshaped_back(target, chain):
    """``target`` (of a piece's type) reshaped as ``chain`` (the reshapes from the computed
    value to the piece, last first) undoes: where the computing op writes."""
    for reshape in chain:
        source_type = reshape.operands[0].type
        groups = reshape.attributes["reassociation"]
        if reshape.name == "tensor.collapse_shape":
            target = _mlir.tensor.expand_shape(source_type, target, groups, [], static_tensor_type(reshape.operands[0]).shape)
        else:
            target = _mlir.tensor.collapse_shape(source_type, target, groups)
    return target


def _pieces_in_place(concat) -> bool:
    """Rewrite ``concat`` (see the module docstring) when one of its pieces can be
    computed in place; the ops computing them keep their order, the pieces are
    inserted in the concat's order, so an op that comes before the piece before it is
    inserted (copied) instead."""
    axis = ir.IntegerAttr(concat.attributes["dim"]).value
    result = static_tensor_type(concat.results[0])
    if result is None:
        return False
    block, pieces, offset = concat.block, [], 0
    for piece in concat.operands:
        offsets = [0] * result.rank
        offsets[axis] = offset
        offset += static_tensor_type(piece).shape[axis]
        computing = _computing_op(piece, axis)
        pieces.append((piece, offsets, computing if computing is not None and computing[0].block == block else None))
    in_place = [p for p in pieces if p[2] is not None]
    if not in_place:
        return False
    first = in_place[0][2][0]
    with ir.InsertionPoint(first), concat.location:
        destination = _mlir.bufferization.AllocTensorOp(result, []).result
    last = None  # the op that inserted the last piece computed in place
    for index, (piece, offsets, computing) in enumerate(pieces):
        if computing is None or (last is not None and comes_before(computing[0], last)):
            pieces[index] = (piece, offsets, None)
            continue
        op, chain = computing
        with ir.InsertionPoint(op), concat.location:
            target = _reshaped_back(slice_at(destination, offsets, list(static_tensor_type(piece).shape)), chain)
        set_linalg_init(op, target)
        after = op
        for reshape in reversed(chain):
            reshape.move_after(after)
            after = reshape
        with ir.InsertionPoint.after(after), concat.location:
            destination = insert_at(piece, destination, offsets)
        last = producer(destination)
    with ir.InsertionPoint(concat), concat.location:
        for piece, offsets, computing in pieces:
            if computing is None:
                destination = insert_at(piece, destination, offsets)
    concat.results[0].replace_all_uses_with(destination)
    concat.erase()
    return True


def concat_pieces_in_place(module: ir.Module) -> int:
    """Compute the pieces of every static concatenation in place where one can be;
    returns how many concatenations were rewritten."""
    return sum(_pieces_in_place(c) for c in walk_ops(module.operation, {"tensor.concat"}))


__all__ = ["concat_pieces_in_place"]
