"""ONNX GridSample (opsets 16 to 22, any number of spatial axes) imported as element-wise
ECG ops on the sampling coordinates and one ``gather`` of every interpolation tap.

Per spatial axis the grid's normalized coordinate is mapped to pixels (``align_corners``),
rounded half to even for ``nearest``, and brought inside by the padding mode (``border``
clamps, ``reflection`` reflects); each tap (1 nearest, 2 linear, 4 cubic per axis) gets its
pixel index (clamped, reflected, or flagged outside for ``zeros``) and weight. Every
combination of taps over the axes reads the data as (channels, pixels of every batch) at
one linear index per output pixel: one gather of all of them, its index and weight
tensors per pixel (computed once, not per channel, in kernels of their own), then
weighted and summed over the taps: a static graph whose size does not depend on the
grid's values. A tap outside the input (``zeros``) reads a zero appended to each row,
with weight 0, and a NaN coordinate is moved far outside first: no select per channel or
tap (a kernel reading a mask tensor runs as scalar loops), and a tap outside adds 0
whatever the data holds.
"""

import functools
import itertools

import numpy as np

from ..ecg.tensor_spec import dtype_name, element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError

_MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic", "nearest": "nearest"}
_CUBIC_A = -0.75
# With ``zeros`` padding, coordinates are clipped to this far outside the input: beyond
# it every tap (up to 2 pixels away for cubic) is outside, as it is at the margin.
_MARGIN = 4.0
_FAR_OUTSIDE = -1e4  # a normalized coordinate beyond the margin of any axis
# The multi-tap modes read rows of channels from this many channels on (one AVX2 vector).
_MIN_PIXEL_ROW = 8


class _Coordinates:
    """Element-wise arithmetic on (N, Q) coordinate tensors of one float type, as ECG ops."""

    def __init__(self, node: NodeBuilder, dtype):
        self.node, self.dtype = node, dtype

    def c(self, value) -> np.ndarray:
        return np.array(value, self.dtype)

    def op(self, mnemonic: str, *operands, **attrs):
        operands = [self.c(v) if isinstance(v, (int, float)) else v for v in operands]
        return self.node.emit_one(mnemonic, list(operands), **attrs)

    def select(self, condition, a, b):
        return self.op("where", condition, a, b)

    def reflect(self, x, low: float, high: float):
        """x reflected at ``low`` and ``high`` until inside (the reference's _gs_reflect)."""
        span = high - low
        if span <= 0:
            return self.op("add", self.op("mul", x, 0.0), low)
        below, above = self.op("less", x, low), self.op("greater", x, high)
        distance = self.select(below, self.op("sub", low, x), self.select(above, self.op("sub", x, high), 0.0))
        folds = self.op("floor", self.op("div", distance, span))
        rest = self.op("sub", distance, self.op("mul", folds, span))
        even = self.op("equal", self.op("sub", folds, self.op("mul", self.op("floor", self.op("div", folds, 2.0)), 2.0)),
                       0.0)
        from_low, from_high = self.op("add", rest, low), self.op("sub", high, rest)
        reflected_below = self.select(even, from_low, from_high)
        reflected_above = self.select(even, from_high, from_low)
        return self.select(below, reflected_below, self.select(above, reflected_above, x))


def _pixels(math: _Coordinates, g, size: int, align: bool, mode: str, padding: str):
    """The pixel coordinate of normalized ``g`` along an axis of ``size``, inside by the padding mode."""
    if align:
        x = math.op("mul", math.op("div", math.op("add", g, 1.0), 2.0), float(size - 1))
    else:
        x = math.op("div", math.op("sub", math.op("mul", math.op("add", g, 1.0), float(size)), 1.0), 2.0)
    if mode == "nearest":
        x = math.op("round", x)
    low, high = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if padding == "border":
        outside = math.op("or", math.op("less", x, low), math.op("greater", x, high))
        x = math.select(outside, math.op("clip", x, min=0.0, max=float(size - 1)), x)
    elif padding == "reflection":
        x = math.reflect(x, low, high)
    else:  # zeros: every tap of a coordinate beyond the margin is outside; make it finite
        x = math.op("clip", x, min=-_MARGIN, max=size - 1.0 + _MARGIN)
    return x, (low, high)


def _taps(math: _Coordinates, x, mode: str) -> list:
    """(pixel index as a float tensor, weight) per tap along one axis."""
    if mode == "nearest":
        return [(x, None)]
    first = math.op("floor", x)
    t = math.op("sub", x, first)
    if mode == "linear":
        return [(first, math.op("sub", 1.0, t)), (math.op("add", first, 1.0), t)]
    a = _CUBIC_A

    def outer(s):  # Keys' kernel for 1 <= s < 2
        return math.op("sub", math.op("mul", math.op("add", math.op("mul", math.op("sub", math.op("mul", s, a), 5 * a), s),
                                                     8 * a), s), 4 * a)

    def inner(s):  # Keys' kernel for 0 <= s < 1
        return math.op("add", math.op("mul", math.op("mul", math.op("sub", math.op("mul", s, a + 2), a + 3), s), s), 1.0)

    weights = [outer(math.op("add", t, 1.0)), inner(t), inner(math.op("sub", 1.0, t)), outer(math.op("sub", 2.0, t))]
    return [(math.op("add", first, float(offset)), w) for offset, w in zip((-1, 0, 1, 2), weights)]


def _index(math: _Coordinates, i, size: int, padding: str, bounds):
    """(int64 index inside [0, size), None or for ``zeros`` 1.0 where the tap is inside
    and 0.0 outside) of tap position ``i``. The inside flag is arithmetic on the integral,
    finite ``i`` (``_pixels`` made it so): a mask tensor would make its kernels scalar."""
    inside = None
    if padding == "zeros":
        inside = math.op("mul", math.op("clip", math.op("add", i, 1.0), min=0.0, max=1.0),
                         math.op("clip", math.op("sub", float(size), i), min=0.0, max=1.0))
    elif padding == "reflection":
        i = math.reflect(i, *bounds)
    i = math.op("clip", i, min=0.0, max=float(size - 1))
    return math.node.emit_one("cast", [i], to="i64"), inside


def _swap_leading(node: NodeBuilder, value):
    """``value`` (n, channels, pixels) as (channels, n, pixels): a reshape when either is
    1 (a transpose would copy)."""
    n, channels, pixels = node.spec(value).shape
    if 1 in (n, channels):
        return node.emit_one("reshape", [value], shape=[channels, n, pixels])
    return node.emit_one("transpose", [value], perm=[1, 0, 2])


def _tap_indices(node: NodeBuilder, axes: list, strides, n: int, pixels: int) -> list:
    """(linear pixel index over every batch, weight or None) of every combination of the
    axes' taps; a tap outside (``zeros``) indexes pixel ``n * pixels`` (the appended
    zero) with weight 0."""
    batch_start = (np.arange(n, dtype=np.int64) * pixels).reshape(n, 1)
    taps = []  # (linear index, weight or None) of every combination of the axes' taps
    for combination in itertools.product(*axes):
        linear, inside, weight = None, None, None
        for stride, (index, tap_inside, tap_weight) in zip(strides, combination):
            term = index if stride == 1 else node.emit_one("mul", [index, np.array(stride, np.int64)])
            linear = term if linear is None else node.emit_one("add", [linear, term])
            if tap_inside is not None:
                inside = tap_inside if inside is None else node.emit_one("mul", [inside, tap_inside])
            if tap_weight is not None:
                weight = tap_weight if weight is None else node.emit_one("mul", [weight, tap_weight])
        linear = node.emit_one("add", [linear, batch_start]) if n > 1 else linear
        if inside is not None:  # outside: the zero's column, weight 0
            flag = node.emit_one("cast", [inside], to="i64")
            linear = node.emit_one("add", [node.emit_one("mul", [linear, flag]),
                                           node.emit_one("mul", [node.emit_one("sub", [np.array(1, np.int64), flag]),
                                                                 np.array(n * pixels, np.int64)])])
            weight = None if weight is None else node.emit_one("mul", [weight, inside])
        taps.append((linear, weight))
    return taps


def _stacked(node: NodeBuilder, values):
    """``values`` (each (n, count)) stacked along a new leading axis (ecg.concat joins two at a time)."""
    rows_of = [node.emit_one("unsqueeze", [v], axes=[0]) for v in values]
    return functools.reduce(lambda a, b: node.emit_one("concat", [a, b], axis=0), rows_of)


def _sample_pixel_rows(node: NodeBuilder, x, taps: list, cast_weights: bool, zero_row: bool, outputs):
    """The multi-tap modes over (pixels of every batch, channels) rows: each tap of an
    output pixel reads one contiguous row of channels (a vector load, its index math once
    per row) where the (channels, pixels) layout needs a vector gather of single elements
    (28% of bandwidth, 2.1x onnxruntime's bilinear time), weighted as they are read
    (``ecg.gather_sum``: the taps are not written to memory). The input and the result are
    transposed to and from that layout in register blocks; with ``zero_row`` a row of
    zeros is appended for the taps outside."""
    spec = node.spec(x)
    n, channels = spec.shape[0], spec.shape[1]
    pixels = int(np.prod(spec.shape[2:], dtype=np.int64))
    rows = node.emit_one("transpose", [node.emit_one("reshape", [x], shape=[n, channels, pixels])], perm=[0, 2, 1])
    rows = node.emit_one("reshape", [rows], shape=[n * pixels, channels])
    if zero_row:
        rows = node.emit_one("concat", [rows, np.zeros((1, channels), spec.dtype)], axis=0)
    weights = _stacked(node, [w for _, w in taps])
    if cast_weights:
        weights = node.emit_one("cast", [weights], to=dtype_name(spec.dtype))
    total = node.emit_one("gather_sum", [rows, _stacked(node, [i for i, _ in taps]), weights])
    total = node.emit_one("transpose", [total], perm=[0, 2, 1])
    return node.emit("reshape", [total], {"shape": [n, channels, *outputs]})


@converter("GridSample")
def _grid_sample(node: NodeBuilder):
    x, grid = node.operand(0), node.operand(1)
    spec, grid_spec = node.spec(x), node.spec(grid)
    rank = spec.rank - 2
    if rank < 1 or grid_spec.rank != spec.rank or grid_spec.shape[-1] != rank or grid_spec.shape[0] != spec.shape[0]:
        raise OnnxImportError(f"{node.info}: grid {grid_spec} does not sample the {rank}-D input {spec}")
    if element_kind(spec.dtype) != "f" or element_kind(grid_spec.dtype) != "f":
        node.unsupported(f"GridSample of {dtype_name(spec.dtype)} by a {dtype_name(grid_spec.dtype)} grid")
    mode = _MODES.get(node.attr("mode", "linear" if node.opset >= 20 else "bilinear"))
    padding = node.attr("padding_mode", "zeros")
    if mode is None or padding not in ("zeros", "border", "reflection"):
        node.unsupported(f"mode '{node.attr('mode')}' with padding_mode '{padding}'")
    align = bool(node.attr("align_corners", 0))
    n, channels, sizes = spec.shape[0], spec.shape[1], spec.shape[2:]
    outputs = grid_spec.shape[1:-1]
    count = int(np.prod(outputs, dtype=np.int64))
    math = _Coordinates(node, grid_spec.dtype)
    flat_grid = node.emit_one("reshape", [grid], shape=[n, count, rank])
    if padding == "zeros":  # a NaN coordinate: far outside (every tap reads 0), in the grid's own kernel
        flat_grid = math.select(math.op("equal", flat_grid, flat_grid), flat_grid, _FAR_OUTSIDE)

    axes = []  # per spatial axis: [(index, inside flag, weight)] of its taps
    for axis, size in enumerate(sizes):
        component = rank - 1 - axis  # the grid lists x (the last axis) first
        g = node.emit_one("reshape", [node.emit_one("slice", [flat_grid], starts=[component], ends=[component + 1],
                                                    axes=[2], steps=[1])], shape=[n, count])
        coordinate, bounds = _pixels(math, g, size, align, mode, padding)
        axes.append([(*_index(math, i, size, padding, bounds), w) for i, w in _taps(math, coordinate, mode)])

    strides = np.cumprod([1] + list(sizes[:0:-1]))[::-1]
    pixels = int(np.prod(sizes, dtype=np.int64))
    taps = _tap_indices(node, axes, strides, n, pixels)
    if mode != "nearest" and channels >= _MIN_PIXEL_ROW:
        return _sample_pixel_rows(node, x, taps, grid_spec.dtype != spec.dtype, padding == "zeros", outputs)
    # (channels, pixels of every batch): a tap gathers one element per output pixel from
    # each channel's row, at an index computed once per pixel.
    rows = node.emit_one("reshape", [_swap_leading(node, node.emit_one("reshape", [x], shape=[n, channels, pixels]))],
                         shape=[channels, n * pixels])
    if padding == "zeros":  # a tap outside the input reads the zero appended to the rows
        rows = node.emit_one("concat", [rows, np.zeros((channels, 1), spec.dtype)], axis=1)
    if len(taps) == 1:  # nearest: (channels, n, count)
        total = node.emit_one("gather", [rows, taps[0][0]], axis=1)
    else:  # every tap in one gather, (channels, taps, n, count), weighted and summed over the taps
        weights = _stacked(node, [w for _, w in taps])
        if grid_spec.dtype != spec.dtype:
            weights = node.emit_one("cast", [weights], to=dtype_name(spec.dtype))
        values = node.emit_one("gather", [rows, _stacked(node, [i for i, _ in taps])], axis=1)
        total = node.emit_one("reduce_sum", [node.emit_one("mul", [values, weights])], axes=[1], keepdims=0)
    # A transpose even where a reshape would do: a kernel of a reshape alone (nearest's)
    # is a copy loop that the GPU targets' entry function cannot hold.
    total = node.emit_one("transpose", [total], perm=[1, 0, 2])
    return node.emit("reshape", [total], {"shape": [n, channels, *outputs]})
