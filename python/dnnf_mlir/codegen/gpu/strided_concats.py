"""A concatenation of a tensor's strided phases as a transpose of its reshape.

Swin's patch merging concatenates on the channels the four 2 x 2 phases of the token
grid (``x[:, r::2, c::2, :]``), then layer-normalizes each merged token. As pieces,
the normalization's reduction reads across them and the pieces need a launch before it
(``phases.py``). Yet when every piece is a phase of one tensor and the pieces, in order,
count the phases' offsets in a mixed radix, the concatenation is the tensor with each
strided axis split into (position, phase), the phases moved before the channels, and
the channels merged again: an expand, a ``linalg.transpose`` and a collapse, which the
readers fold into their maps (``reshapes``, ``collapsed_reads``), div/mod free.
"""

from __future__ import annotations

import itertools
import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import reassociation, static_slice, static_tensor_type


def _composed(piece):
    """(source, offsets, sizes, strides) of a static ``tensor.extract_slice``, taken from
    the tensor its source slices in turn (``x[:, 0::2][:, :, 0::2]``), or None."""
    found = static_slice(piece) if piece is not None and piece.name == "tensor.extract_slice" else None
    if found is None:
        return None
    source = piece.operands[0]
    offsets, sizes, strides = found
    inner = source.owner if isinstance(source, ir.OpResult) else None
    outer = _composed(inner) if inner is not None and inner.name == "tensor.extract_slice" else None
    if outer is not None and len(outer[2]) == len(sizes):
        source, above, _, scale = outer
        offsets = [a + o * k for a, o, k in zip(above, offsets, scale)]
        strides = [k * t for k, t in zip(scale, strides)]
    return source, offsets, sizes, strides


def _phases(concat):
    """(source, concatenated axis, strided axes -> stride, the strided axes from the one
    whose phase varies slowest in the pieces' order), or None where ``concat`` is not a
    concatenation of all phases of one tensor in a mixed-radix order."""
    axis = ir.IntegerAttr(concat.attributes["dim"]).value
    pieces = [_composed(p.owner if isinstance(p, ir.OpResult) else None) for p in concat.operands]
    if len(pieces) < 2 or None in pieces:
        return None
    source, _, sizes, strides = pieces[0]
    t = static_tensor_type(source)
    if t is None or any(p[0] != source or p[2] != sizes or p[3] != strides for p in pieces) or len(sizes) != t.rank:
        return None
    shape = t.shape
    offsets = [p[1] for p in pieces]
    strided = {a: k for a, k in enumerate(strides) if k != 1}
    for a, n in enumerate(shape):
        if a in strided:
            if sizes[a] * strided[a] != n or any(not 0 <= o[a] < strided[a] for o in offsets):
                return None
        elif sizes[a] != n or any(o[a] != 0 for o in offsets):
            return None
    if not strided or axis in strided or math.prod(strided.values()) != len(pieces):
        return None
    for order in itertools.permutations(sorted(strided)):
        counted = [sum(o[a] * math.prod(strided[b] for b in order[i + 1:]) for i, a in enumerate(order))
                   for o in offsets]
        if counted == list(range(len(pieces))):
            return source, axis, strided, list(order)
    return None


def concats_of_phases(module: ir.Module) -> int:
    """Every concatenation of all phases of one tensor (see the module docstring) ->
    expand, transpose, collapse. Returns how many."""
    rewritten = 0
    for concat in walk_ops(module.operation, {"tensor.concat"}):
        found = _phases(concat)
        if found is None:
            continue
        source, axis, strided, order = found
        t = static_tensor_type(source)
        expanded_shape, groups, position, phase = [], [], {}, {}
        for a, n in enumerate(t.shape):
            position[a] = len(expanded_shape)
            if a in strided:
                phase[a] = position[a] + 1
                expanded_shape += [n // strided[a], strided[a]]
            else:
                expanded_shape.append(n)
            groups.append(list(range(position[a], len(expanded_shape))))
        permutation, merged = [], []
        for a in range(t.rank):
            start = len(permutation)
            permutation += [phase[b] for b in order] + [position[a]] if a == axis else [position[a]]
            merged.append(list(range(start, len(permutation))))
        with ir.InsertionPoint(concat), concat.location:
            expanded = _mlir.tensor.expand_shape(ir.RankedTensorType.get(expanded_shape, t.element_type), source,
                                                 reassociation(groups), [], expanded_shape)
            shape = [expanded_shape[d] for d in permutation]
            empty = _mlir.tensor.empty(shape, t.element_type)
            moved = _mlir.linalg.transpose(expanded, outs=[empty], permutation=permutation)
            joined = _mlir.tensor.collapse_shape(concat.results[0].type, moved, reassociation(merged))
        concat.results[0].replace_all_uses_with(joined)
        pieces = [p.owner for p in concat.operands]
        concat.erase()
        while pieces:  # the slices left unread, and the slices they read
            piece = pieces.pop()
            if piece.name == "tensor.extract_slice" and not list(piece.results[0].uses):
                above = piece.operands[0].owner if isinstance(piece.operands[0], ir.OpResult) else None
                piece.erase()
                pieces += [above] if above is not None else []
        rewritten += 1
    return rewritten


__all__ = ["concats_of_phases"]
