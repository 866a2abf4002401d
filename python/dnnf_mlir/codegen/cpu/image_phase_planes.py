"""A zero-padded image's stride-2 phase planes written straight from the image.

``flat_conv_rows`` reads a stride-2 convolution's input as its four phase planes
(``flat_planes.phase_planes``). Split from the padded input, the image was copied
twice: into the padded input, then into the planes (ResNet-50's 3x3/2 128 -> 128 from
56x56: the pad's copy 5.4% and its column borders 2.7% of the kernel's samples, the
split 5.3%). Here the one transposing copy writes the image's phases into the planes'
interiors, and only the planes' borders are zeroed.

With top and left padding ``T`` and ``L``, image phase ``(ya, xb)`` (rows ``2t + ya``,
columns ``2s + xb``) lands in padded phase ``((ya + T) % 2, (xb + L) % 2)`` at row
``t + (ya + T) // 2``, column ``s + (xb + L) // 2``. The planes are laid out by the
image's phase (plane ``(ya, xb)`` at ``(2 * ya + xb) * R * P`` of a channel's flat row, ``R``
rows of pitch ``P`` each: ``slot`` says where a padded phase is), so that element
``(ya, xb, t, s)`` is at ``base + ya * SY + xb * SX + t * P + s`` with ``SY = 2RP + (T %
2) P``, ``SX = RP + L % 2`` and ``base = (T // 2) P + L // 2``: all strides positive, a
view of nested slices whenever ``2 SX <= SY`` (``T`` odd, or ``T`` and ``L`` even).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import generic, insert_at, slice_at
from ..linalg_queries import is_f32, pad_fill, reassociation, static_tensor_type
from .convolutions import static_pad


def _padding(x):
    """(image, top, left) of ``x``, a zero ``tensor.pad`` of an f32 image along its rows
    and columns only, or an image read as is; None for anything else."""
    pad_op = x.owner if isinstance(x, ir.OpResult) else None
    if pad_op is None or pad_op.name != "tensor.pad":
        return x, 0, 0
    amounts = static_pad(pad_op)
    if pad_fill(pad_op) != 0.0 or amounts is None or any(amounts[0][:2] + amounts[1][:2]):
        return None
    return pad_op.operands[0], amounts[0][2], amounts[0][3]


def _split_last(value, sizes):
    """``value`` with its last dim expanded into ``sizes``."""
    shape = static_tensor_type(value).shape
    groups = [[d] for d in range(len(shape) - 1)] + [list(range(len(shape) - 1, len(shape) - 1 + len(sizes)))]
    result = list(shape[:-1]) + list(sizes)
    return _mlir.tensor.expand_shape(ir.RankedTensorType.get(result, static_tensor_type(value).element_type), value,
                                     reassociation(groups), [], result)


def _merge_last(value, count: int):
    """``value`` with its last ``count`` dims collapsed into one."""
    shape = static_tensor_type(value).shape
    keep = len(shape) - count
    groups = [[d] for d in range(keep)] + [list(range(keep, len(shape)))]
    result = list(shape[:keep]) + [math.prod(shape[keep:])]
    return _mlir.tensor.collapse_shape(ir.RankedTensorType.get(result, static_tensor_type(value).element_type), value,
                                       reassociation(groups))


def _zeroed(value, offsets, sizes):
    """``value`` with the box at ``offsets`` of ``sizes`` filled with zeros, in place (a
    fill of its slice: a fill of a tensor of its own is a buffer of its own, copied in)."""
    f32 = static_tensor_type(value).element_type
    zeros = _mlir.linalg.fill(_mlir.arith.constant(f32, 0.0), outs=[slice_at(value, offsets, sizes)])
    return insert_at(zeros, value, offsets)


def _zeroed_borders(buffer, image_shape, top: int, left: int, rows: int, pitch: int, tail: int):
    """``buffer`` (``[N, C, 4 R P + tail + ...]``) with the parts of each plane that the
    image does not cover, and the ``tail`` after the planes, filled with zeros."""
    n, c, h, w = image_shape
    size = 4 * rows * pitch
    planes = _split_last(slice_at(buffer, [0, 0, 0], [n, c, size]), [2, 2, rows, pitch])
    for ya in range(2):
        for xb in range(2):
            first, column = (ya + top) // 2, (xb + left) // 2
            boxes = [((0, 0), (first, pitch)), ((first + h // 2, 0), (rows - first - h // 2, pitch)),
                     ((first, 0), (h // 2, column)), ((first, column + w // 2), (h // 2, pitch - column - w // 2))]
            for (row, col), (height, width) in boxes:
                if height > 0 and width > 0:
                    planes = _zeroed(planes, [0, 0, ya, xb, row, col], [n, c, 1, 1, height, width])
    buffer = insert_at(_merge_last(planes, 4), buffer, [0, 0, 0])
    return _zeroed(buffer, [0, 0, size], [n, c, tail]) if tail else buffer


def image_phase_planes(x, rows: int, pitch: int, tail: int):
    """``(planes, slot)``: the stride-2 phase planes of ``x`` as ``phase_planes(x padded
    to [N, C, 2 rows, 2 pitch], (2, 2), rows, pitch, tail)`` lays them out, but with
    padded phase ``(a, b)`` at plane ``slot(a, b)`` (see the module docstring), written
    from the image itself; None when ``x`` is not an image of even height and width
    (zero-padded along its rows and columns) whose layout is a view of nested slices."""
    found = _padding(x)
    image_t = static_tensor_type(found[0]) if found is not None else None
    if image_t is None or not is_f32(image_t):
        return None
    image, top, left = found
    n, c, h, w = image_t.shape
    if h % 2 or w % 2 or (top % 2 == 0 and left % 2) or (top + 1) // 2 + h // 2 > rows \
            or (left + 1) // 2 + w // 2 > pitch:
        return None
    sy, sx = 2 * rows * pitch + (top % 2) * pitch, rows * pitch + left % 2
    base = (top // 2) * pitch + left // 2
    total = max(4 * rows * pitch + tail, base + 2 * sy)
    buffer = _zeroed_borders(_mlir.tensor.empty([n, c, total], image_t.element_type), image_t.shape, top, left,
                             rows, pitch, tail)
    # The nested views of the interiors: [2 (ya), SY] > [2, 2 (xb), SX] > [2, 2, H/2, P] > [2, 2, H/2, W/2].
    by_row = _split_last(slice_at(buffer, [0, 0, base], [n, c, 2 * sy]), [2, sy])
    by_column = _split_last(slice_at(by_row, [0, 0, 0, 0], [n, c, 2, 2 * sx]), [2, sx])
    grid = _split_last(slice_at(by_column, [0] * 5, [n, c, 2, 2, h // 2 * pitch]), [h // 2, pitch])
    interior = slice_at(grid, [0] * 6, [n, c, 2, 2, h // 2, w // 2])
    d = [ir.AffineDimExpr.get(k) for k in range(6)]  # (n, c, ya, xb, t, s)
    read = ir.AffineMap.get(6, 0, [d[0], d[1], d[4], d[2], d[5], d[3]])
    pairs_t = ir.RankedTensorType.get([n, c, h // 2, 2, w // 2, 2], image_t.element_type)
    pairs = _mlir.tensor.expand_shape(pairs_t, image, reassociation([[0], [1], [2, 3], [4, 5]]), [], pairs_t.shape)
    phases = generic([pairs], [read, ir.AffineMap.get_identity(6)], [interior], lambda value, _: value)[0]
    grid = insert_at(phases, grid, [0] * 6)
    by_column = insert_at(_merge_last(grid, 2), by_column, [0] * 5)
    by_row = insert_at(_merge_last(by_column, 2), by_row, [0] * 4)
    buffer = insert_at(_merge_last(by_row, 2), buffer, [0, 0, base])
    return buffer, lambda a, b: 2 * ((a - top) % 2) + (b - left) % 2


__all__ = ["image_phase_planes"]
