"""Store-to-load forwarding on a thread's vectorized tensors.

A thread's register tile is a small tensor (up to 16x8) built one vec4 row at a time: its
accumulators are filled, then written back after the reduction loop, each
``vector.transfer_write`` into a row slice, ``tensor.insert_slice``d into the tile; the
epilogue reads the rows back. Canonicalization folds a read of the write it directly
follows but not through those slices, and bufferization then keeps the tile in a
private array, copied row by row. ``forward_transfers(module)`` follows each
``vector.transfer_read`` at constant indices through the inserts, extracts and writes
its tensor came from to the vector written there, when one write covers exactly what
it reads.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import constant_index, static_slice


def _constants(values) -> list | None:
    result = [constant_index(value) for value in values]
    return None if None in result else result


def _slice(op) -> tuple | None:
    """(offsets, sizes) of a unit-stride slice with static offsets and sizes."""
    found = static_slice(op)
    if found is None or any(stride != 1 for stride in found[2]):
        return None
    return found[0], found[1]


def _dropped(sizes, rank: int) -> set:
    """The dims a rank-reducing slice of ``rank`` dims drops: its first unit dims."""
    dropped = set()
    for dim, size in enumerate(sizes):
        if len(dropped) < len(sizes) - rank and size == 1:
            dropped.add(dim)
    return dropped


def _into_slice(indices, offsets, sizes, rank: int) -> list:
    """``indices`` relative to a slice of ``rank`` dims, its dropped unit dims removed
    (any read inside it indexes them at 0)."""
    dropped = _dropped(sizes, rank)
    return [i - o for dim, (i, o) in enumerate(zip(indices, offsets)) if dim not in dropped]


def _out_of_slice(indices, offsets, sizes, rank: int) -> list:
    """The inverse of ``_into_slice``: indices in a slice of ``rank`` dims -> the source's."""
    dropped, position, result = _dropped(sizes, rank), 0, []
    for dim in range(len(sizes)):
        if dim in dropped:
            result.append(offsets[dim])
            continue
        result.append(offsets[dim] + indices[position])
        position += 1
    return result


def _minor(op) -> bool:
    """Whether a transfer's vector runs along its tensor's innermost dim."""
    amap = ir.AffineMapAttr(op.attributes["permutation_map"]).value
    return amap == ir.AffineMap.get_minor_identity(amap.n_dims, 1)


def _written(read) -> ir.Value | None:
    """The vector a ``vector.transfer_read`` reads back, found through slices; None when
    no single write of the same vector covers exactly its elements."""
    vector = ir.VectorType(read.results[0].type)
    source = read.operands[0]
    if vector.rank != 1 or not isinstance(source.type, ir.RankedTensorType) or not _minor(read):
        return None
    if len(list(read.operands)) != ir.RankedTensorType(source.type).rank + 2:
        return None  # masked
    indices = _constants(list(read.operands)[1:-1])
    if indices is None:
        return None
    width = vector.shape[0]
    while isinstance(source, ir.OpResult):
        op = source.owner
        if op.name == "vector.transfer_write" and ir.VectorType(op.operands[0].type) == vector and _minor(op):
            at = _constants(list(op.operands)[2:])
            if at is None or len(at) != len(indices):
                return None
            if at == indices:
                return op.operands[0]
            disjoint = at[:-1] != indices[:-1] or abs(at[-1] - indices[-1]) >= width
            if not disjoint:
                return None
            source = op.operands[1]
        elif op.name == "tensor.insert_slice" and _slice(op) is not None:
            offsets, sizes = _slice(op)
            inside = all(o <= i and i + (width if d == len(indices) - 1 else 1) <= o + s
                         for d, (i, o, s) in enumerate(zip(indices, offsets, sizes)))
            overlaps = all(i < o + s and o < i + (width if d == len(indices) - 1 else 1)
                           for d, (i, o, s) in enumerate(zip(indices, offsets, sizes)))
            if inside:
                rank = ir.RankedTensorType(op.operands[0].type).rank
                indices = _into_slice(indices, offsets, sizes, rank)
                source = op.operands[0]
            elif overlaps:
                return None
            else:
                source = op.operands[1]
        elif op.name == "tensor.extract_slice" and _slice(op) is not None:
            offsets, sizes = _slice(op)
            if width > 1 and len(sizes) - 1 in _dropped(sizes, len(indices)):
                return None  # a column of the source (its innermost dim dropped): the vector runs down it
            indices = _out_of_slice(indices, offsets, sizes, len(indices))
            source = op.operands[0]
        else:
            return None
    return None


def forward_transfers(module: ir.Module) -> int:
    """Replace each ``vector.transfer_read`` of a thread's tensor by the vector written
    where it reads (see the module docstring). Returns how many."""
    forwarded = 0
    for read in walk_ops(module.operation, {"vector.transfer_read"}):
        value = _written(read)
        if value is not None:
            read.results[0].replace_all_uses_with(value)
            forwarded += 1
    return forwarded


__all__ = ["forward_transfers"]
