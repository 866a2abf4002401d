"""A 2-D NCHW convolution of bytes as a matmul: its windows as rows, the product back to NCHW.

``vnni_matmul`` multiplies rows of bytes by packed constant weights. A convolution
``[N, C, H, W] * [F, C, KH, KW]`` is that product once each output pixel's window of
input bytes is one row (im2col): ``[N * OH * OW, KH * KW * C]``, tap by tap (kernel
row, then kernel column) with each tap's channels contiguous, as NHWC holds them, so the
filters packed are ``filters`` in that order (``filter_matrix``). The product, one row of F channels a
pixel, goes back to NCHW in the element-wise conversion to f32 that its consumers read.
"""

from __future__ import annotations

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, generic, index_constant, slice_at, split_offsets
from ..linalg_queries import reassociation, static_tensor_type

COPY_BYTES = 64  # a 512-bit register of bytes


def filter_matrix(filters: np.ndarray) -> np.ndarray:
    """``[F, C, KH, KW]`` filters as the ``[KH * KW * C, F]`` matrix the window rows multiply."""
    return filters.transpose(0, 2, 3, 1).reshape(filters.shape[0], -1).T


def nhwc(nchw):
    """The 4-D tensor ``nchw`` with its channels innermost."""
    n, c, h, w = static_tensor_type(nchw).shape
    element = static_tensor_type(nchw).element_type
    return generic([nchw], [affine_map(4, [0, 3, 1, 2]), ir.AffineMap.get_identity(4)],
                   [_mlir.tensor.empty([n, h, w, c], element)], lambda x, _out: x)[0]


def _copy_taps(padded, rows, image, y, x, geometry: tuple):
    """``rows`` (``[OW, KH * KW * C]``) with row ``x`` the window of output pixel (``y``,
    ``x``) of image ``image``: each tap's C channels copied by vectors of up to 64 bytes."""
    arith, vector = _mlir.arith, _mlir.vector
    (kh, kw), strides, dilations = geometry
    c = static_tensor_type(padded).shape[3]
    element = static_tensor_type(padded).element_type
    top, left = (arith.muli(v, index_constant(s)) for v, s in ((y, strides[0]), (x, strides[1])))
    for i in range(kh):
        row = arith.addi(top, index_constant(i * dilations[0]))
        for j in range(kw):
            column = arith.addi(left, index_constant(j * dilations[1]))
            for first in range(0, c, COPY_BYTES):
                width = ir.VectorType.get([min(COPY_BYTES, c - first)], element)
                bytes_ = vector.transfer_read(width, padded, [image, row, column, index_constant(first)],
                                              ir.AffineMap.get_minor_identity(4, 1), arith.constant(element, 0), [True])
                rows = vector.transfer_write(rows.type, bytes_, rows, [x, index_constant((i * kw + j) * c + first)],
                                             ir.AffineMap.get_minor_identity(2, 1), [True])
    return rows


def window_rows(padded, kernel: tuple, output: tuple, strides: tuple, dilations: tuple):
    """The windows of the padded NHWC input ``padded`` as rows ``[N * OH * OW, KH * KW * C]``
    (each tap's channels contiguous in both: vector copies), a row of output pixels a
    thread's share: ``kernel`` (KH, KW), ``output`` (OH, OW)."""
    arith, scf = _mlir.arith, _mlir.scf
    n, h, w, c = static_tensor_type(padded).shape
    (kh, kw), (oh, ow) = kernel, output
    depth = kh * kw * c
    if (kh, kw, h, w) == (1, 1, oh, ow):  # a 1x1 convolution over every pixel: the NHWC bytes are the rows
        rows = ir.RankedTensorType.get([n * h * w, c], static_tensor_type(padded).element_type)
        return _mlir.tensor.collapse_shape(rows, padded, reassociation([[0, 1, 2], [3]]))
    rows = _mlir.tensor.empty([n * oh * ow, depth], static_tensor_type(padded).element_type)
    loop = scf.ForallOp([0], [n * oh], [1], [rows])
    index, shared = loop.regions[0].blocks[0].arguments
    with ir.InsertionPoint(loop.regions[0].blocks[0]):
        image, y = arith.divui(index, index_constant(oh)), arith.remui(index, index_constant(oh))
        first_row = arith.muli(index, index_constant(ow))
        pixels = scf.ForOp(index_constant(0), index_constant(ow), index_constant(1),
                           [slice_at(shared, [first_row, 0], [ow, depth])])
        with ir.InsertionPoint(pixels.body):
            scf.YieldOp([_copy_taps(padded, pixels.inner_iter_args[0], image, y, pixels.induction_variable,
                                    (kernel, strides, dilations))])
        with ir.InsertionPoint(scf.InParallelOp().region.blocks[0]):
            values, static = split_offsets([first_row, 0])
            _mlir.tensor.parallel_insert_slice(pixels.results[0], shared, values, [], [], static, [ow, depth], [1, 1])
    return loop.results[0]


def nchw_result(product, shape: list, element):
    """The i32 ``product`` (``[F, N * OH * OW]``) as the NCHW tensor of ``shape`` and
    ``element`` type (f32, or i32 itself)."""
    n, f, oh, ow = shape
    i32 = ir.IntegerType.get_signless(32)
    planes = _mlir.tensor.expand_shape(ir.RankedTensorType.get([f, n, oh, ow], i32),
                                       product, reassociation([[0], [1, 2, 3]]), [], [f, n, oh, ow])
    convert = (lambda x, _out: x) if element == i32 else (lambda x, _out: _mlir.arith.sitofp(element, x))
    return generic([planes], [affine_map(4, [1, 0, 2, 3]), ir.AffineMap.get_identity(4)],
                   [_mlir.tensor.empty(shape, element)], convert)[0]


__all__ = ["filter_matrix", "nchw_result", "nhwc", "window_rows"]
