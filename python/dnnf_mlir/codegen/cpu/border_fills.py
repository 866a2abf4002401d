"""Padded buffers filled on their border only.

A ``tensor.pad`` (or an insert into a filled tensor) bufferizes to a fresh buffer, a
fill of all of it with the pad value, then a copy of the source into its interior:
the interior is written twice. Every padded convolution pays the whole-buffer fill (a
``memset`` of 1.7 MB, ~2% of ResNet-50's 3x3/2 128@56 convolution). Here such a fill
is replaced by fills of the border's slabs: per padded dim, the part before and after
the interior, over the interior of the dims before it and all of the dims after it.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from .slice_copies import static_box

VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast")


def _interior(view):
    """(buffer, offsets, sizes) of ``view`` when it is a static unit-stride
    ``memref.subview``, else None."""
    op = view.owner if isinstance(view, ir.OpResult) else None
    if op is None or op.name != "memref.subview":
        return None
    box = static_box(op)
    return None if box is None else (op.operands[0], *box)


def _root(value):
    """The buffer ``value`` is a view of (through subviews, reshapes and casts)."""
    while isinstance(value, ir.OpResult) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    return value


def _whole_fill(copy, buffer):
    """The value of the fill of all of ``buffer`` that ``copy`` follows with nothing but
    subviews between, and that fill; else None."""
    ops = list(copy.block.operations)
    position = ops.index(copy) - 1
    while position >= 0 and ops[position].name == "memref.subview":
        position -= 1
    fill = ops[position] if position >= 0 else None
    if fill is None or len(fill.results) or not len(fill.operands) or list(fill.operands)[-1] != buffer:
        return None
    if fill.name == "linalg.fill":
        return fill.operands[0], fill
    body_ops = list(fill.regions[0].blocks[0].operations) if fill.name == "linalg.map" else []
    if len(fill.operands) != 1 or len(body_ops) != 1:
        return None  # a map of inputs, or one that computes its value: not a fill
    value = body_ops[0].operands[0]
    inside = isinstance(value, ir.BlockArgument) and value.owner == fill.regions[0].blocks[0]
    return None if inside else (value, fill)


def border_slabs(shape, offsets, sizes):
    """(offsets, sizes) of the boxes that cover ``shape`` but the interior box, disjoint."""
    slabs = []
    for dim, (extent, offset, size) in enumerate(zip(shape, offsets, sizes)):
        for start, length in ((0, offset), (offset + size, extent - offset - size)):
            if length > 0:
                slabs.append((offsets[:dim] + [start] + [0] * (len(shape) - dim - 1),
                              sizes[:dim] + [length] + list(shape[dim + 1:])))
    return slabs


def fill_only_borders(module: ir.Module):
    """Replace the whole-buffer fill before a copy into the buffer's interior by fills
    of its border (see the module docstring)."""
    for copy in walk_ops(module.operation, {"memref.copy"}):
        copy = copy.operation
        interior = _interior(copy.operands[1])
        if interior is None or _root(copy.operands[0]) == _root(interior[0]):
            continue  # not into a box; or out of the buffer itself, whose fill the copy may read
        buffer, offsets, sizes = interior
        if not ir.MemRefType(buffer.type).has_static_shape:
            continue
        found = _whole_fill(copy, buffer)
        if found is None:
            continue
        value, fill = found
        with ir.InsertionPoint(fill), fill.location:
            for slab_offsets, slab_sizes in border_slabs(ir.MemRefType(buffer.type).shape, offsets, sizes):
                slab = _mlir.memref.subview(buffer, slab_offsets, slab_sizes, [1] * len(slab_sizes))
                _mlir.linalg.fill(value, outs=[slab])
        fill.erase()


__all__ = ["border_slabs", "fill_only_borders"]
