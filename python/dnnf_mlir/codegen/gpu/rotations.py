"""Cyclic shifts computed where the shifted value's producers read the kernel's arguments.

Swin's shifted windows roll the token grid (``torch.roll``: ONNX Slice + Concat, a
concatenation of two slices of one tensor that together form a rotation,
``y[i] = x[(i + s) mod n]``). Built in place, the pieces are read by the window
partition after them: a launch for the pieces, one more per nested rotation
(``phases.py``). Yet the rolled value is computed row by row (a residual sum and its
layer normalization, reducing over the channels, never over the rolled axes): each
row of the rotation is the row the producers compute from the rotated rows of their
inputs. So the rotation moves up through the producers (element-wise ops and
reductions over other dims, reshapes, transposes, nested rotations) to the kernel's
arguments, which the kernel reads as a gather at the rotated index (``tensor.extract``
of an argument, in bounds by construction, as ``gathers.py``'s pads): no piece, no
concatenation, one dispatch. Producers also read unrotated (the returned residual sum)
stay for those reads; the rotated copies share their common parts (CSE).

A permutation moving up is a function building the source indices as arith ops in the
gather's body; it changes and reads only the axes it names, so that an operand
indexing none of them (a normalization's weights) is read as it was.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import delinearize_index, generic, index_constant
from ..linalg_queries import (TENSOR_RESHAPES, indexing_maps, linalg_input_count, parallel_loops, reassociation_groups,
                              static_slice, static_tensor_type)

MAX_PUSHED_OPS = 64  # ops a rotation may copy on its way up; more: left to the pieces


def _wrapped(index, shift: int, n: int):
    """``(index + shift) mod n`` for ``index`` in [0, n), ``shift`` in [0, n): a compare and
    a select, no division."""
    arith = _mlir.arith
    moved = arith.addi(index, index_constant(shift))
    wrapped = arith.cmpi(arith.CmpIPredicate.uge, moved, index_constant(n))
    return arith.select(wrapped, arith.subi(moved, index_constant(n)), moved)


class _Permutation:
    """``y[i] = x[apply(i)]`` over a value of ``shape``: ``apply(indices)`` returns the
    source indices (index values; None at the axes it does not read), changing and
    reading only the axes in ``axes``."""

    def __init__(self, shape, axes, apply):
        self.shape, self.axes, self.apply = list(shape), frozenset(axes), apply


def _rotation_permutation(shape, axis: int, shift: int) -> _Permutation:
    n = shape[axis]

    def apply(indices):
        moved = list(indices)
        moved[axis] = _wrapped(indices[axis], shift, n)
        return moved

    return _Permutation(shape, {axis}, apply)


def _then(first: _Permutation, second: _Permutation) -> _Permutation:
    """``y[i] = x[second(first(i))]``: ``first`` applied to a value that is ``second`` of
    ``x``."""
    return _Permutation(first.shape, first.axes | second.axes,
                        lambda indices: second.apply(first.apply(indices)))


def rotation(concat):
    """(source, axis, shift) when the ``tensor.concat`` ``concat`` is a rotation of one
    tensor along its axis (its pieces static unit-stride slices of ``source``, whole on
    every other axis, following each other cyclically from ``shift``); else None."""
    axis = ir.IntegerAttr(concat.attributes["dim"]).value
    pieces = [p.owner if isinstance(p, ir.OpResult) else None for p in concat.operands]
    if len(pieces) < 2 or any(p is None or p.name != "tensor.extract_slice" for p in pieces):
        return None
    source = pieces[0].operands[0]
    t = static_tensor_type(source)
    if t is None or t.rank != static_tensor_type(concat.results[0]).rank:
        return None
    n, at = t.shape[axis], None
    for piece in pieces:
        found = static_slice(piece)
        if found is None or piece.operands[0] != source or set(found[2]) != {1}:
            return None
        offsets, sizes, _ = found
        if any((offsets[a], sizes[a]) != (0, t.shape[a]) for a in range(t.rank) if a != axis):
            return None
        if at is not None and offsets[axis] != at % n or offsets[axis] + sizes[axis] > n:
            return None
        at = offsets[axis] + sizes[axis] if at is None else at + sizes[axis]
    first = static_slice(pieces[0])[0][axis]
    if at - first != n:
        return None
    return source, axis, first


def _linearize(indices, dims, shape):
    """The row-major position of ``indices`` at ``dims`` within ``shape``."""
    arith = _mlir.arith
    position = indices[dims[0]]
    for d in dims[1:]:
        position = arith.addi(arith.muli(position, index_constant(shape[d])), indices[d])
    return position


def _through_expand(permutation: _Permutation, groups, source_shape) -> _Permutation:
    """``permutation`` of an expand_shape's result moved to its source (source dim ``s``
    is result dims ``groups[s]``)."""
    wide_shape = permutation.shape
    axes = [s for s, group in enumerate(groups) if set(group) & permutation.axes]

    def apply(indices):
        wide = [None] * len(wide_shape)
        for s in axes:
            for d, index in zip(groups[s], delinearize_index(indices[s], [wide_shape[d] for d in groups[s]])):
                wide[d] = index
        moved, out = permutation.apply(wide), list(indices)
        for s in axes:
            out[s] = _linearize(moved, groups[s], wide_shape)
        return out

    return _Permutation(source_shape, axes, apply)


def _through_collapse(permutation: _Permutation, groups, source_shape) -> _Permutation:
    """``permutation`` of a collapse_shape's result moved to its source (result dim ``r``
    is source dims ``groups[r]``)."""
    touched = sorted(permutation.axes)

    def apply(indices):
        narrow = [None] * len(groups)
        for r in touched:
            narrow[r] = _linearize(indices, groups[r], source_shape)
        moved, out = permutation.apply(narrow), list(indices)
        for r in touched:
            for d, index in zip(groups[r], delinearize_index(moved[r], [source_shape[d] for d in groups[r]])):
                out[d] = index
        return out

    return _Permutation(source_shape, [d for r in touched for d in groups[r]], apply)


def _operand_permutation(permutation: _Permutation, op_map, output_map, operand_shape):
    """``permutation`` of a generic's result as a permutation of the operand read through
    ``op_map`` (the loop dims of the permuted axes read directly, all or none: an
    empty permutation), or None when the operand reads them otherwise."""
    loop_of = {a: ir.AffineDimExpr(output_map.results[a]).position for a in range(len(output_map.results))}
    loops = {loop_of[a] for a in permutation.axes}
    axis_of = {}
    for k, expr in enumerate(op_map.results):
        if isinstance(expr, ir.AffineDimExpr) and ir.AffineDimExpr(expr).position in loops:
            axis_of[ir.AffineDimExpr(expr).position] = k
        elif not isinstance(expr, (ir.AffineDimExpr, ir.AffineConstantExpr)):
            return None
    if not axis_of:
        return _Permutation(operand_shape, (), lambda indices: indices)
    if set(axis_of) != loops:
        return None

    def apply(indices):
        result = [None] * len(output_map.results)
        for a in permutation.axes:
            result[a] = indices[axis_of[loop_of[a]]]
        moved, out = permutation.apply(result), list(indices)
        for a in permutation.axes:
            out[axis_of[loop_of[a]]] = moved[a]
        return out

    return _Permutation(operand_shape, [axis_of[loop_of[a]] for a in permutation.axes], apply)


def _invariant(op) -> bool:
    """A generic whose result is the same at every index (a fill): no tensor inputs, no
    index read in its body."""
    body = op.regions[0].blocks[0]
    return linalg_input_count(op) == 0 and not any(inner.name in ("linalg.index", "tensor.extract")
                                                   for inner in body.operations)


class _Pusher:
    """Builds a value permuted (``push``) at the insertion point, from the kernel's
    arguments up; with ``build`` False, only says whether it can (creating nothing)."""

    def __init__(self, build: bool):
        self.build, self.pushed = build, 0

    def push(self, value, permutation: _Permutation):
        """``value`` permuted (``value`` itself when not building), or None."""
        if not permutation.axes:
            return value
        self.pushed += 1
        op = value.owner if isinstance(value, ir.OpResult) else None
        if self.pushed > MAX_PUSHED_OPS:
            return None
        if op is None or op.name == "arith.constant":
            return self._gather(value, permutation) if self.build else value
        if op.name == "tensor.empty":
            return value  # undefined contents: any order of them
        if op.name == "tensor.concat" and rotation(op) is not None:
            source, axis, shift = rotation(op)
            return self.push(source, _then(permutation, _rotation_permutation(permutation.shape, axis, shift)))
        if op.name in TENSOR_RESHAPES:
            source = op.operands[0]
            through = _through_expand if op.name == "tensor.expand_shape" else _through_collapse
            moved = self.push(source, through(permutation, reassociation_groups(op), static_tensor_type(source).shape))
            return None if moved is None else self._clone(op, [moved])
        if op.name == "linalg.generic" and len(op.results) == 1:
            return self._generic(op, permutation)
        return None

    def _clone(self, op, operands: list):
        """``op`` over ``operands`` (its result, when building)."""
        if not self.build:
            return op.results[0]
        clone = op.clone()
        for i, value in enumerate(operands):
            clone.operands[i] = value
        return clone.results[0]

    def _generic(self, op, permutation: _Permutation):
        """``op`` computing the permuted result from its operands permuted alike, when
        the permuted axes are parallel loops that every operand reads directly or not at
        all and its body does not read its indices; not a contraction of several inputs
        read elsewhere too (a projection), which the copy would compute again."""
        if _invariant(op):
            return op.results[0]
        if any(inner.name == "linalg.index" for inner in op.regions[0].blocks[0].operations):
            return None  # computes from its indices (a gather, a position): they would move too
        maps = indexing_maps(op)
        output = maps[-1]
        parallel = parallel_loops(op)
        if not output.is_projected_permutation or \
                any(not parallel[ir.AffineDimExpr(output.results[a]).position] for a in permutation.axes):
            return None
        if not all(parallel) and linalg_input_count(op) > 1 and len(list(op.results[0].uses)) > 1:
            return None
        block = op.regions[0].blocks[0]
        operands = []
        for number, (value, amap) in enumerate(zip(op.operands, maps)):
            t = static_tensor_type(value)
            unread = number >= linalg_input_count(op) and not list(block.arguments[number].uses)
            if t is None or unread:  # an init the body does not read: any order of it
                operands.append(value)
                continue
            moved = _operand_permutation(permutation, amap, output, t.shape)
            moved = self.push(value, moved) if moved is not None else None
            if moved is None:
                return None
            operands.append(moved)
        return self._clone(op, operands)

    @staticmethod
    def _gather(value, permutation: _Permutation):
        """``value`` (an argument, a constant) read at the permuted index by a gather."""
        t = static_tensor_type(value)
        empty = _mlir.tensor.empty(list(t.shape), t.element_type)

        def body(_out):
            indices = [_mlir.linalg.IndexOp(d).result for d in range(t.rank)]
            return _mlir.tensor.extract(value, permutation.apply(indices))

        return generic([], [ir.AffineMap.get_identity(t.rank)], [empty], body)[0]


def _erase_unread(op):
    """Erase ``op`` and then the producers of its operands (views, concatenations, linalg
    ops on tensors) that nothing reads any more."""
    pending = [op]
    while pending:
        op = pending.pop()
        if any(list(result.uses) for result in op.results):
            continue
        producers = [v.owner for v in op.operands if isinstance(v, ir.OpResult)]
        op.erase()
        pending += [p for p in producers if p.name.startswith(("tensor.", "linalg.")) and p not in pending]


def rotations_from_arguments(module: ir.Module) -> int:
    """Every rotation (``rotation``) that its producers can compute from the kernel's
    arguments (``_Pusher``) -> those producers computing the rotated rows, reading the
    arguments at the rotated index (see the module docstring); the last one first, so
    that a nested rotation moves up with the one reading it. Returns how many."""
    rewritten, kept = 0, []
    while True:
        found = [c for c in walk_ops(module.operation, {"tensor.concat"}) if c not in kept and rotation(c) is not None]
        if not found:
            return rewritten
        concat = found[-1]
        source, axis, shift = rotation(concat)
        permutation = _rotation_permutation(static_tensor_type(source).shape, axis, shift)
        if _Pusher(build=False).push(source, permutation) is None:
            kept.append(concat)
            continue
        with ir.InsertionPoint(concat), concat.location:
            rotated = _Pusher(build=True).push(source, permutation)
        concat.results[0].replace_all_uses_with(rotated)
        _erase_unread(concat)
        rewritten += 1


__all__ = ["MAX_PUSHED_OPS", "rotation", "rotations_from_arguments"]
