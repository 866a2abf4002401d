"""Slices of a concatenation -> concatenations of slices of its pieces.

A roll (Swin's cyclic shift) is two slices concatenated; rolled along two axes, the
second roll slices the first's concatenation along the other axis. Built in place
(``concats.py``), the second concatenation's pieces would be copies of slices of the
first's buffer: a launch more, to compute the first before they read it
(``phases.py``). A slice of ``concat(a, b)`` is instead the concatenation of the
slices of ``a`` and ``b`` it spans (or the slice of one of them), so that nested
concatenations (``concats._leaves``) place every piece, computed once, straight into
the outer result.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ..linalg_queries import static_tensor_type
from ..lowered_module import walk_ops


def _static(op, name: str) -> list:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _pieces_spanned(extract, concat) -> list | None:
    """(piece, offsets, sizes) of each piece of ``concat`` that ``extract`` (a unit-stride,
    static, rank-keeping slice of it) spans, the slice's box within it; None when the
    slice is not of that form or is the whole concatenation."""
    if len(list(extract.operands)) != 1 or any(s != 1 for s in _static(extract, "static_strides")):
        return None
    offsets, sizes = _static(extract, "static_offsets"), _static(extract, "static_sizes")
    result = static_tensor_type(extract.results[0])
    source = static_tensor_type(concat.results[0])
    if result is None or source is None or list(result.shape) != sizes or sizes == list(source.shape):
        return None
    axis = ir.IntegerAttr(concat.attributes["dim"]).value
    spanned, start = [], 0
    for piece in concat.operands:
        extent = static_tensor_type(piece).shape[axis]
        low, high = max(offsets[axis], start), min(offsets[axis] + sizes[axis], start + extent)
        if low < high:
            box_offsets, box_sizes = list(offsets), list(sizes)
            box_offsets[axis], box_sizes[axis] = low - start, high - low
            spanned.append((piece, box_offsets, box_sizes))
        start += extent
    return spanned


def slices_of_concats(module: ir.Module) -> int:
    """Every static unit-stride slice of a ``tensor.concat`` -> the concatenation of the
    slices of the pieces it spans, along the same axis (the slice of one piece when it
    spans one). Returns how many."""
    rewritten = 0
    changed = True
    while changed:  # a piece sliced may be a concatenation in turn
        changed = False
        for extract in walk_ops(module.operation, {"tensor.extract_slice"}):
            source = extract.operands[0]
            concat = source.owner.operation if isinstance(source, ir.OpResult) else None
            if concat is None or concat.name != "tensor.concat":
                continue
            spanned = _pieces_spanned(extract, concat)
            if not spanned:
                continue
            element = static_tensor_type(source).element_type
            with ir.InsertionPoint(extract), extract.location:
                boxes = [_mlir.tensor.extract_slice(ir.RankedTensorType.get(sizes, element), piece, [], [], [], offsets,
                                                    sizes, [1] * len(sizes)) for piece, offsets, sizes in spanned]
                joined = boxes[0] if len(boxes) == 1 else \
                    _mlir.tensor.concat(extract.results[0].type, ir.IntegerAttr(concat.attributes["dim"]).value, boxes)
            extract.results[0].replace_all_uses_with(joined)
            extract.erase()
            if not list(concat.results[0].uses):
                concat.erase()
            rewritten += 1
            changed = True
            break
    return rewritten


__all__ = ["slices_of_concats"]
