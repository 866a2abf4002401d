"""Winograd F(4x4, 3x3) for 3x3, stride-1, dilation-1 NCHW convolutions, on linalg on tensors.

``winograd_convolution(op, filters)`` replaces one f32 ``conv_2d_nchw_fchw`` by (Lavin and
Gray's F(4x4, 3x3), ``Y = A^T [(G g G^T) . (B^T d B)] A`` per 6x6 input tile of stride 4):

1. the input zero-padded to whole tiles, split once by column phase (``[N, C, H, 4, TW + 1]``,
   column ``4 t + p`` at ``[.., p, t]``) so that each of the 36 positions of the 6x6 tile
   is a view of contiguous rows; one element-wise ``linalg.generic`` computes the 36
   values of ``B^T d B`` per tile and channel (two passes of six-term sums, zero
   coefficients left out), gathered into ``V[36, C, tiles]``; on small planes the taps
   are first copied out of their strided views and transformed over one flat dim of
   the image's tiles (``MAX_FLAT_TILES``), whole vectors instead of short rows;
2. ONE ``linalg.batch_matmul`` ``M[36, K, tiles] = U[36, K, C] x V[36, C, tiles]``: the
   CPU's matmul micro-kernel (packed B panels), 2.25 multiply-adds per output and input
   channel instead of 9;
3. one element-wise generic computes the 16 outputs of ``A^T m A`` per tile as
   ``[4, 4, N, K, TH, TW]``, one transposing copy makes them the whole-tile output
   ``[N, K, 4 TH, 4 TW]`` (where the CPU's prepare step folds the epilogue in,
   ``cpu/permuted_epilogues.py``), of which the convolution's ``OH x OW`` are kept.

``U = G g G^T`` is computed here in float64 from the filters' constant, so the weights
file holds the 6x6 form (``transformed_filters``). The choice of which convolutions get
it is the caller's (``winograd_pass.py``). Accuracy: the transforms' coefficients (up
to 8 and 1/24) make the error 8-18 times the direct f32 convolution's on small layers
(``test_winograd.py``), still 0.013 of ``dnnf-run --check``'s tolerance on VGG-19.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _mlir
from .._mlir import ir
from ..linalg_builders import affine_map, generic, make_pad
from .linalg_queries import conv_params, is_f32, pad_fill, reassociation, static_tensor_type

TILE, WINDOW = 4, 3  # F(TILE x TILE, WINDOW x WINDOW)
SPAN = TILE + WINDOW - 1  # the input tile: 6 x 6
POINTS = SPAN * SPAN  # the independent products: 36
# An image of at most MAX_FLAT_TILES tiles (16x16 outputs), a multiple of
# FLAT_TILE_MULTIPLE (a vector of AVX2, half one of AVX-512), is transformed over one flat
# dim of tiles, not rows of TW tiles (``_tile_dims``). Measured (AVX-512, 1 thread, each
# with bias and ReLU, Winograd before / after): 64 -> 256 channels at 13x13 0.50, 256 ->
# 256 at 14x14 0.66; 9 tiles (masked vectors) lost: 50 -> 70 at 11x11 1.19, 96 -> 200 at
# 9x9 1.05; rows of 14 tiles (56x56) 2.3 where flat (a row of 196 spills).
MAX_FLAT_TILES = 16
FLAT_TILE_MULTIPLE = 8

# Lavin and Gray (2016), F(4, 3) with interpolation points 0, +-1, +-2.
B_T = np.array([[4, 0, -5, 0, 1, 0],
                [0, -4, -4, 1, 1, 0],
                [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0],
                [0, 2, -1, -2, 1, 0],
                [0, 4, 0, -5, 0, 1]], dtype=np.float64)
G = np.array([[1 / 4, 0, 0],
              [-1 / 6, -1 / 6, -1 / 6],
              [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6],
              [1 / 24, -1 / 12, 1 / 6],
              [0, 0, 1]], dtype=np.float64)
A_T = np.array([[1, 1, 1, 1, 1, 0],
                [0, 1, -1, 2, -2, 0],
                [0, 1, 1, 4, 4, 0],
                [0, 1, -1, 8, -8, 1]], dtype=np.float64)


def is_winograd_shape(op) -> bool:
    """Whether ``op`` is an f32 ``conv_2d_nchw_fchw`` with static shapes, a 3x3 window,
    stride 1 and dilation 1: what ``winograd_convolution`` computes."""
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.results) != 1:
        return False
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or not is_f32(t) for t in types):
        return False
    strides, dilations = conv_params(op)
    return tuple(types[1].shape[2:]) == (WINDOW, WINDOW) and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)


def transformed_filters(filters: np.ndarray) -> np.ndarray:
    """``G g G^T`` of filters ``[K, C, 3, 3]`` as ``[36, K, C]`` f32 (computed in float64).

    One matrix product, ``(G kron G) [9, K C]`` (point ``(a, b)`` is row ``6 a + b``,
    tap ``(i, j)`` column ``3 i + j``): three times faster than ``einsum`` on VGG's 512
    x 512 layers, where the filters of a whole model took a second."""
    k, c = filters.shape[:2]
    taps = filters.reshape(k * c, WINDOW * WINDOW).astype(np.float64).T
    return (np.kron(G, G) @ taps).astype(np.float32).reshape(POINTS, k, c)


def _combination(coefficients, values):
    """``sum(c * v)`` as arith ops, zero terms left out and +-1 without a multiply."""
    arith = _mlir.arith
    total = None
    for coefficient, value in zip(coefficients, values):
        if coefficient == 0:
            continue
        if abs(coefficient) == 1 and total is not None:
            total = arith.addf(total, value) if coefficient > 0 else arith.subf(total, value)
            continue
        term = value if coefficient == 1 else arith.mulf(arith.constant(value.type, float(coefficient)), value)
        total = term if total is None else arith.addf(total, term)
    return total


def _separable(matrix, grid):
    """``matrix . grid . matrix^T`` of a square grid of scalars, as two passes of sums."""
    rows = [[_combination(matrix[a], [grid[u][v] for u in range(len(grid))]) for v in range(len(grid[0]))]
            for a in range(len(matrix))]
    return [[_combination(matrix[b], rows[a]) for b in range(len(matrix))] for a in range(len(matrix))]


def _zero_padded(x, high_h: int, high_w: int):
    """``x`` with ``high_h`` / ``high_w`` more zero rows / columns; an existing zero
    ``tensor.pad`` producing it is widened instead of padded again."""
    arith = _mlir.arith
    low, high = [0] * 4, [0] * 4
    pad_op = x.owner if isinstance(x, ir.OpResult) else None
    if pad_op is not None and pad_op.name == "tensor.pad" and pad_fill(pad_op) == 0.0:
        low = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_low"]))
        high = list(ir.DenseI64ArrayAttr(pad_op.attributes["static_high"]))
        if all(v >= 0 for v in low + high):
            x = pad_op.operands[0]
        else:
            low, high = [0] * 4, [0] * 4
    high[2] += high_h
    high[3] += high_w
    return make_pad(x, low, high, arith.constant(ir.RankedTensorType(x.type).element_type, 0.0))


def _is_zero_fill(init) -> bool:
    owner = init.owner if isinstance(init, ir.OpResult) else None
    if owner is None or owner.name != "linalg.fill":
        return False
    value = owner.operands[0]
    constant = value.owner if isinstance(value, ir.OpResult) else None
    return (constant is not None and constant.name == "arith.constant"
            and ir.FloatAttr(constant.attributes["value"]).value == 0.0)


def _column_phases(x, tiles_w: int):
    """``x`` ``[N, C, H, 4 (TW + 1)]`` as ``[N, C, H, 4, TW + 1]``: column ``4 t + p`` at
    ``[.., p, t]``, so that every tap of the tiles is a contiguous row (an element-wise
    transpose of a short dim, which the row schedule does in registers)."""
    tensor = _mlir.tensor
    x_t = ir.RankedTensorType(x.type)
    n, c, h, _ = x_t.shape
    split = tensor.expand_shape(ir.RankedTensorType.get([n, c, h, tiles_w + 1, TILE], x_t.element_type), x,
                                reassociation([[0], [1], [2], [3, 4]]), [], [n, c, h, tiles_w + 1, TILE])
    out = tensor.empty([n, c, h, TILE, tiles_w + 1], x_t.element_type)
    return generic([split], [affine_map(5, [0, 1, 2, 4, 3]), affine_map(5, [0, 1, 2, 3, 4])], [out],
                   lambda value, _: value)[0]


def _tile_dims(tiles_h: int, tiles_w: int) -> list:
    """The dims of an image's tiles in the transforms: one flat dim of TH x TW tiles on
    small planes (``MAX_FLAT_TILES``: whole vectors where rows of TW would be short
    ones), else rows of TW."""
    tiles = tiles_h * tiles_w
    return [tiles] if tiles <= MAX_FLAT_TILES and tiles % FLAT_TILE_MULTIPLE == 0 else [tiles_h, tiles_w]


def _input_transform(x, n: int, c: int, tiles_h: int, tiles_w: int):
    """``V[36, C, N * tiles]``: ``B^T d B`` of every 6x6 tile (stride 4) of ``x``, padded
    to ``[N, C, 4 TH + 2, 4 (TW + 1)]``. On small planes the 36 taps are first copied
    out, each a contiguous ``[C, N, TH * TW]`` (``_tile_dims``; their rows are strided
    views of ``x``), for the transform to run on whole vectors."""
    tensor = _mlir.tensor
    f32 = ir.RankedTensorType(x.type).element_type
    phases = _column_phases(x, tiles_w)
    view_t = ir.RankedTensorType.get([n, c, tiles_h, tiles_w], f32)
    views = [tensor.extract_slice(view_t, phases, [], [], [], [0, 0, u, v % TILE, v // TILE],
                                  [n, c, tiles_h, 1, tiles_w], [1, 1, TILE, 1, 1])
             for u in range(SPAN) for v in range(SPAN)]
    # Loops (c, n, th, tw): each result is [C, N, TH, TW], the batch matmul's B layout.
    read = affine_map(4, [1, 0, 2, 3])
    identity = affine_map(4, [0, 1, 2, 3])
    dims = _tile_dims(tiles_h, tiles_w)
    if len(dims) == 1:
        taps = generic(views, [read] * POINTS + [identity] * POINTS,
                       [tensor.empty([c, n, tiles_h, tiles_w], f32) for _ in range(POINTS)], lambda *v: v[:POINTS])
        tap_t = ir.RankedTensorType.get([c, n, *dims], f32)
        views = [tensor.collapse_shape(tap_t, tap, reassociation([[0], [1], [2, 3]])) for tap in taps]
        read = identity = affine_map(3, [0, 1, 2])
    outputs = [tensor.empty([c, n, *dims], f32) for _ in range(POINTS)]

    def body(*scalars):
        grid = [list(scalars[u * SPAN:(u + 1) * SPAN]) for u in range(SPAN)]
        return [value for row in _separable(B_T, grid) for value in row]

    points = generic(views, [read] * POINTS + [identity] * POINTS, outputs, body)
    gathered = tensor.empty([POINTS, c, n, *dims], f32)
    for index, point in enumerate(points):
        gathered = tensor.insert_slice(point, gathered, [], [], [], [index, 0, 0] + [0] * len(dims),
                                       [1, c, n, *dims], [1] * (3 + len(dims)))
    return tensor.collapse_shape(ir.RankedTensorType.get([POINTS, c, n * tiles_h * tiles_w], f32), gathered,
                                 reassociation([[0], [1], list(range(2, 3 + len(dims)))]))


def _output_transform(products, n: int, k: int, tiles_h: int, tiles_w: int):
    """``A^T m A`` of every tile of ``products`` ``[36, K, N * tiles]``: ``[N, K, 4 TH, 4 TW]``
    (on small planes over one flat dim of tiles, ``_tile_dims``)."""
    tensor = _mlir.tensor
    f32 = ir.RankedTensorType(products.type).element_type
    dims = _tile_dims(tiles_h, tiles_w)
    rank = 2 + len(dims)
    flat_t = ir.RankedTensorType.get([k, n * tiles_h * tiles_w], f32)
    tiled_t = ir.RankedTensorType.get([k, n, *dims], f32)
    points = []
    for index in range(POINTS):
        point = tensor.extract_slice(flat_t, products, [], [], [], [index, 0, 0], [1, k, n * tiles_h * tiles_w],
                                     [1, 1, 1])
        points.append(tensor.expand_shape(tiled_t, point, reassociation([[0], list(range(1, rank))]), [],
                                          [k, n, *dims]))
    identity = affine_map(rank, range(rank))
    write = affine_map(rank, [1, 0] + list(range(2, rank)))  # loops (k, n, tiles) -> [N, K, tiles]
    outputs = [tensor.empty([n, k, *dims], f32) for _ in range(TILE * TILE)]

    def body(*scalars):
        grid = [list(scalars[a * SPAN:(a + 1) * SPAN]) for a in range(SPAN)]
        return [value for row in _separable(A_T, grid) for value in row]

    results = generic(points, [identity] * POINTS + [write] * (TILE * TILE), outputs, body)
    # Each output [i, j] a contiguous [N, K, tiles] (the generic writes it in place,
    # ``cpu/slice_copies.py``), then one transposing copy into the output's layout
    # [N, K, TH, i, TW, j].
    phases = tensor.empty([TILE, TILE, n, k, *dims], f32)
    for index, result in enumerate(results):
        i, j = divmod(index, TILE)
        phases = tensor.insert_slice(result, phases, [], [], [], [i, j] + [0] * rank, [1, 1, n, k, *dims],
                                     [1] * (2 + rank))
    if len(dims) == 1:
        phases = tensor.expand_shape(ir.RankedTensorType.get([TILE, TILE, n, k, tiles_h, tiles_w], f32), phases,
                                     reassociation([[0], [1], [2], [3], [4, 5]]), [], [TILE, TILE, n, k, tiles_h, tiles_w])
    whole = generic([phases], [affine_map(6, [3, 5, 0, 1, 2, 4]), affine_map(6, [0, 1, 2, 3, 4, 5])],
                    [tensor.empty([n, k, tiles_h, TILE, tiles_w, TILE], f32)], lambda value, _: value)[0]
    return tensor.collapse_shape(ir.RankedTensorType.get([n, k, TILE * tiles_h, TILE * tiles_w], f32), whole,
                                 reassociation([[0], [1], [2, 3], [4, 5]]))


def winograd_convolution(op, filters) -> ir.Value:
    """The result of ``op`` (``is_winograd_shape``) computed by F(4x4, 3x3) from
    ``filters``, the ``[36, K, C]`` value of ``transformed_filters``; inserted before ``op``."""
    tensor, linalg, arith = _mlir.tensor, _mlir.linalg, _mlir.arith
    x_t, out_t = static_tensor_type(op.operands[0]), static_tensor_type(op.results[0])
    n, c, h, w = x_t.shape
    k, oh, ow = out_t.shape[1:]
    f32 = out_t.element_type
    tiles_h, tiles_w = math.ceil(oh / TILE), math.ceil(ow / TILE)
    with ir.InsertionPoint(op), op.location:
        x = _zero_padded(op.operands[0], TILE * tiles_h + WINDOW - 1 - h, TILE * (tiles_w + 1) - w)
        v = _input_transform(x, n, c, tiles_h, tiles_w)
        zero = arith.constant(f32, 0.0)
        init = linalg.fill(zero, outs=[tensor.empty([POINTS, k, n * tiles_h * tiles_w], f32)])
        products = linalg.batch_matmul(filters, v, outs=[init])
        whole = _output_transform(products, n, k, tiles_h, tiles_w)
        y = tensor.extract_slice(out_t, whole, [], [], [], [0, 0, 0, 0], [n, k, oh, ow], [1, 1, 1, 1])
        init = op.operands[2]
        if not _is_zero_fill(init):
            identity = affine_map(4, [0, 1, 2, 3])
            y = generic([y, init], [identity] * 3, [tensor.empty([n, k, oh, ow], f32)],
                        lambda product, start, _: arith.addf(start, product))[0]
    return y


__all__ = ["A_T", "B_T", "G", "POINTS", "is_winograd_shape", "transformed_filters",
           "winograd_convolution"]
