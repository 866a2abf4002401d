"""Buffers copied whole into a slice of another, written in that slice instead.

Winograd's transforms (``codegen/winograd.py``) compute 36 (input) values per tile in
one ``linalg.generic`` of as many results, each inserted into slice ``[i]`` of one
tensor (``V[36, C, tiles]``). One-shot bufferization gives every result a buffer of
its own and copies it into the slice (it cannot tell that the inserts write disjoint
slices): 36 serial copies of all the transformed data, outside any parallel loop,
about a fifth of a 64-channel 56x56 layer's time on two threads. Here, after
bufferization, such a copy is dropped and the buffer's writers write the slice
directly, when that is the same memory layout (the writers' subviews keep their
types) and no other write to the target comes between.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import ancestor_in_block, block_positions, walk_ops

DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


def static_box(subview):
    """(offsets, sizes) of a unit-stride ``memref.subview`` with static operands, else None."""
    if len(subview.operands) != 1:
        return None
    offsets = list(ir.DenseI64ArrayAttr(subview.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(subview.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(subview.attributes["static_strides"]))
    if any(s != 1 for s in strides) or DYNAMIC in offsets + sizes:
        return None
    return offsets, sizes


def _overlap(a, b) -> bool:
    return all(oa < ob + sb and ob < oa + sa for oa, sa, ob, sb in zip(a[0], a[1], b[0], b[1]))


def _same_layout_strides(source_type, target_type):
    """The source's strides when the target (a slice with a static offset) lays out
    the same shape alike, strides of unit dims aside; else None."""
    source_t, target_t = ir.MemRefType(source_type), ir.MemRefType(target_type)
    if source_t.shape != target_t.shape or source_t.element_type != target_t.element_type:
        return None
    source_strides, _ = source_t.get_strides_and_offset()
    target_strides, offset = target_t.get_strides_and_offset()
    if offset == DYNAMIC or any(a != b for a, b, size in zip(source_strides, target_strides, source_t.shape)
                                if size != 1):
        return None
    return list(source_strides)


def _restrided(target, strides, before):
    """``target`` with ``strides`` (which differ from its own only on unit dims): the
    type its writers' subviews were built for."""
    target_t = ir.MemRefType(target.type)
    _, offset = target_t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(offset, strides)
    with ir.InsertionPoint(before), before.location:  # of the slice itself: its buffer's other uses stay slices
        return _mlir.memref.reinterpret_cast(ir.MemRefType.get(target_t.shape, target_t.element_type, layout), target,
                                             [], [], [], [offset], target_t.shape, strides)


def _verifies(op) -> bool:
    try:
        return op.verify()
    except ir.MLIRError:
        return False


def _defining_op(value):
    return value.owner.operation if isinstance(value, ir.OpResult) else None


def _elide(copy) -> bool:
    copy = copy.operation
    source, target = copy.operands
    fresh, view = _defining_op(source), _defining_op(target)
    if fresh is None or fresh.name != "memref.alloc" or view is None or view.name != "memref.subview":
        return False
    base = view.operands[0]
    base_alloc = _defining_op(base)
    box = static_box(view)
    if box is None or base_alloc is None or base_alloc.name != "memref.alloc" or len(base_alloc.operands):
        return False
    block = copy.block
    if fresh.block != block or view.block != block or base_alloc.block != block:
        return False
    writers = [use.owner.operation for use in source.uses if use.owner.operation != copy]
    if not writers or any(w.name != "memref.subview" or ancestor_in_block(w, block) is None for w in writers):
        return False
    indices = block_positions(block)

    def position(op) -> int:
        return indices[op.operation]

    here = position(copy)
    if any(position(ancestor_in_block(w, block)) > here for w in writers):
        return False
    # The slice is used only after the copy, and every other use of its buffer before
    # the copy is a disjoint static slice.
    for use in target.uses:
        anchor = ancestor_in_block(use.owner.operation, block)
        if use.owner.operation != copy and (anchor is None or position(anchor) < here):
            return False
    for use in base.uses:
        other = use.owner.operation
        anchor = ancestor_in_block(other, block)
        if other == view or (anchor is not None and position(anchor) > here):
            continue
        other_box = static_box(other) if other.name == "memref.subview" else None
        if other_box is None or _overlap(box, other_box):
            return False
    strides = _same_layout_strides(source.type, target.type)
    if strides is None:
        return False
    first = position(fresh)  # moving the base's alloc leaves the view's order to ``fresh`` as it was
    if position(base_alloc) > first:
        base_alloc.move_before(fresh)
    if position(view) > first:
        view.move_before(fresh)
    written = target
    if strides != ir.MemRefType(target.type).get_strides_and_offset()[0]:
        written = _restrided(target, strides, fresh)
    for writer in writers:
        writer.operands[0] = written
        if not _verifies(writer):  # another layout: the subview's type no longer holds
            for w in writers:
                w.operands[0] = source
            if written != target:
                written.owner.operation.erase()
            return False
    copy.erase()
    fresh.erase()
    return True


def write_copied_buffers_in_place(module: ir.Module) -> int:
    """Drop each ``memref.copy`` of a fresh buffer into a slice that its writers can
    write directly (see the module docstring); returns how many."""
    return sum(_elide(copy) for copy in walk_ops(module.operation, {"memref.copy"}))


__all__ = ["static_box", "write_copied_buffers_in_place"]
