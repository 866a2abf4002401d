"""Converters of ONNX's quantization operators, registered in ``CONVERTERS``.

QuantizeLinear and DequantizeLinear become ``quantize_linear`` / ``dequantize_linear``
with their scale and zero point reshaped to broadcast against the input (per tensor,
per axis, or blocked: repeated along the axis); a missing zero point is zeros of the
quantized type. The QOperator forms are built from ECG ops as onnxruntime computes
them:

- MatMulInteger and ConvInteger: the zero points subtracted in int32, then an int32
  ``mat_mul`` / ``conv`` (exact, as the int32 accumulation of onnxruntime);
- QLinearMatMul and QLinearConv: the same integer product (plus QLinearConv's int32
  bias), scaled by a_scale * b_scale / y_scale in f32 and quantized with scale 1,
  which is onnxruntime's requantization (round half to even, saturate);
- DynamicQuantizeLinear: onnxruntime's parameters: the range widened to hold 0,
  scale (max - min) / 255 (1 for an all-zero input), zero point rounded half away
  from zero after clamping (onnxruntime's std::round).
"""

import numpy as np

from ..ecg.ops.quantization import QUANTIZED_TYPES
from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import FLOAT8_DTYPES, dtype_name
from .casts import emit_cast
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import onnx_dtype

_I32 = "i32"


def _scalar(value, dtype) -> np.ndarray:
    return np.array(value, dtype)


def _parameter(node: NodeBuilder, index: int, data_shape: tuple, axis: int, block_size: int = 0):
    """Scale or zero point ``index`` shaped to broadcast against data of ``data_shape``."""
    value = node.operand(index)
    shape = node.spec(value).shape
    rank = len(data_shape)
    if len(shape) == 0 or (len(shape) == 1 and shape[0] == 1 and not block_size):
        return node.emit("reshape", [value], {"shape": []})[0]
    axis = normalize_axis(axis, rank)
    if block_size:
        return _repeat_blocks(node, value, data_shape, axis, block_size)
    if len(shape) != 1 or shape[0] != data_shape[axis]:
        node.unsupported(f"input {index} of shape {list(shape)} for data {list(data_shape)} and axis {axis}")
    return node.emit("reshape", [value], {"shape": [shape[0]] + [1] * (rank - axis - 1)})[0]


def _repeat_blocks(node: NodeBuilder, value, data_shape: tuple, axis: int, block_size: int):
    """A blocked parameter (one per ``block_size`` elements along ``axis``) repeated to the data's shape."""
    shape = list(node.spec(value).shape)
    blocks = -(-data_shape[axis] // block_size)
    expected = list(data_shape[:axis]) + [blocks] + list(data_shape[axis + 1:])
    if shape != expected:
        node.unsupported(f"a blocked parameter of shape {shape} (expected {expected} for block_size {block_size})")
    (value,) = node.emit("unsqueeze", [value], {"axes": [axis + 1]})
    repeated = shape[:axis + 1] + [block_size] + shape[axis + 1:]
    (value,) = node.emit("expand", [value], {"shape": repeated})
    (value,) = node.emit("reshape", [value], {"shape": shape[:axis] + [blocks * block_size] + shape[axis + 1:]})
    return _slice_axis(node, value, axis, 0, data_shape[axis])


def _quantized_type(node: NodeBuilder, dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in QUANTIZED_TYPES:
        node.unsupported(f"quantized element type {dtype_name(dtype)} (int8, uint8, int16, uint16, int32 only)")
    return dtype


def _zero_point(node: NodeBuilder, index: int, data_shape: tuple, axis: int, dtype, block_size: int = 0):
    """Zero point ``index`` as ``_parameter`` does, or a zero of ``dtype`` when absent."""
    if not node.has_input(index):
        return _scalar(0, _quantized_type(node, dtype))
    _quantized_type(node, node.spec(node.operand(index)).dtype)
    if not data_shape:
        return node.operand(index)
    return _parameter(node, index, data_shape, axis, block_size)


def _axis_and_block(node: NodeBuilder) -> tuple:
    block_size = node.attr("block_size", 0)
    if node.attr("precision", 0):
        node.unsupported("attribute 'precision'")
    return node.attr("axis", 1), block_size


@converter("QuantizeLinear")
def _quantize_linear(node: NodeBuilder):
    x = node.operand(0)
    shape = node.spec(x).shape
    axis, block_size = _axis_and_block(node)
    scale = _parameter(node, 1, shape, axis, block_size)
    output_dtype = node.attr("output_dtype", 0)
    default = onnx_dtype(output_dtype) if output_dtype else np.uint8
    if _float8_quantized(node, default):
        return emit_cast(node, node.emit_one("div", [x, scale]), _float8_quantized(node, default))
    zero_point = _zero_point(node, 2, shape, axis, default, block_size)
    return node.emit("quantize_linear", [x, scale, zero_point])


@converter("DequantizeLinear")
def _dequantize_linear(node: NodeBuilder):
    x = node.operand(0)
    spec = node.spec(x)
    axis, block_size = _axis_and_block(node)
    scale = _parameter(node, 1, spec.shape, axis, block_size)
    if _float8_quantized(node, spec.dtype):
        widened = node.emit_one("cast", [x], to="f32")
        return node.emit("cast", [node.emit_one("mul", [widened, node.emit_one("cast", [scale], to="f32")])],
                         {"to": dtype_name(node.spec(scale).dtype)})
    _quantized_type(node, spec.dtype)
    scale = _parameter(node, 1, spec.shape, axis, block_size)
    zero_point = _zero_point(node, 2, spec.shape, axis, spec.dtype, block_size)
    return node.emit("dequantize_linear", [x, scale, zero_point])


def _float8_quantized(node: NodeBuilder, default) -> np.dtype | None:
    """The float8 type that QuantizeLinear / DequantizeLinear quantize to (their zero point's,
    else ``default``), or None for any other. A float8 zero point must be zero (ONNX's
    reference ignores it), so it is not read; a constant one that is not zero is refused."""
    zero_point = node.operand(2) if node.has_input(2) else None
    dtype = np.dtype(default) if zero_point is None else node.spec(zero_point).dtype
    if dtype not in FLOAT8_DTYPES.values():
        return None
    if isinstance(zero_point, np.ndarray) and np.any(zero_point.astype(np.float32) != 0):
        node.unsupported("a nonzero float8 zero point")
    return dtype


@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(node: NodeBuilder):
    x = node.operand(0)
    f32 = np.float32
    every_axis = {"axes": list(range(node.spec(x).rank)), "keepdims": 0}
    (low,) = node.emit("min", [node.emit("reduce_min", [x], every_axis)[0], _scalar(0, f32)])
    (high,) = node.emit("max", [node.emit("reduce_max", [x], every_axis)[0], _scalar(0, f32)])
    (span,) = node.emit("sub", [high, low])
    (scale,) = node.emit("div", [span, _scalar(255, f32)])
    (empty,) = node.emit("equal", [span, _scalar(0, f32)])
    (scale,) = node.emit("where", [empty, _scalar(1, f32), scale])
    (start,) = node.emit("neg", [node.emit("div", [low, scale])[0]])
    (start,) = node.emit("clip", [start], {"min": 0.0, "max": 255.0})
    # std::round: half away from zero (start >= 0: floor, plus 1 from a fraction of 1/2).
    (whole,) = node.emit("floor", [start])
    (half_up,) = node.emit("greater_or_equal", [node.emit("sub", [start, whole])[0], _scalar(0.5, f32)])
    (rounded,) = node.emit("add", [whole, node.emit("cast", [half_up], {"to": "f32"})[0]])
    (zero_point,) = node.emit("cast", [rounded], {"to": "ui8"})
    return [*node.emit("quantize_linear", [x, scale, zero_point]), scale, zero_point]


def _centered(node: NodeBuilder, value, zero_point_index: int, shape: tuple, axis: int):
    """(``value`` as int32 minus its zero point (input ``zero_point_index``, if given), a
    bound on the magnitude of its elements): the values themselves when known."""
    info = np.iinfo(_quantized_type(node, node.spec(value).dtype))
    (centered,) = node.emit("cast", [value], {"to": _I32})
    zero_point = np.zeros((), np.int64)
    if node.has_input(zero_point_index):
        zero_point = node.operand(zero_point_index)
        zero_shape = node.spec(zero_point).shape
        if len(zero_shape) == 1 and zero_shape[0] > 1 and axis is not None:
            (zero_point,) = node.emit("reshape", [zero_point], {"shape": [zero_shape[0]] + [1] * (len(shape) - axis - 1)})
        elif len(zero_shape) <= 1:
            (zero_point,) = node.emit("reshape", [zero_point], {"shape": []})
        (zero_point,) = node.emit("cast", [zero_point], {"to": _I32})
        (centered,) = node.emit("sub", [centered, zero_point])
    if isinstance(centered, np.ndarray):
        return centered, int(np.abs(centered).max(initial=0))
    if isinstance(zero_point, np.ndarray):
        extremes = np.abs(np.stack([info.min - zero_point.astype(np.int64), info.max - zero_point.astype(np.int64)]))
        return centered, int(extremes.max())
    return centered, int(info.max) - int(info.min)


def _slice_axis(node: NodeBuilder, value, axis: int, start: int, end: int):
    rank = node.spec(value).rank
    return node.emit("slice", [value], {"starts": [start], "ends": [end], "axes": [axis % rank], "steps": [1]})[0]


# Integers up to this magnitude are exact in f32: a product of integers summed in f32
# is exact while every partial sum stays below it.
EXACT_IN_F32 = 1 << 24


def _integer_matmul(node: NodeBuilder, a_index: int, b_index: int, a_zero: int, b_zero: int):
    """int32 (A - a_zero) @ (B - b_zero), A's zero point per row, B's per column, exact as
    onnxruntime's int32 accumulation: f32 matmuls (the fast kernels) over chunks of the
    inner dimension short enough that no partial sum leaves f32's exact integers, summed in
    int32 (one chunk for uint8 activations by int8 weights up to 518 deep)."""
    a, b = node.operand(a_index), node.operand(b_index)
    a_shape, b_shape = node.spec(a).shape, node.spec(b).shape
    a, a_bound = _centered(node, a, a_zero, a_shape, len(a_shape) - 2 if len(a_shape) >= 2 else None)
    b, b_bound = _centered(node, b, b_zero, b_shape, len(b_shape) - 1)
    depth, chunk = a_shape[-1], max(1, EXACT_IN_F32 // max(1, a_bound * b_bound))
    a, b = (node.emit("cast", [v], {"to": "f32"})[0] for v in (a, b))
    b_axis = -2 if len(b_shape) >= 2 else 0
    total = None
    for start in range(0, max(depth, 1), chunk):
        end = min(depth, start + chunk)
        pieces = (a, b) if end - start == depth else (_slice_axis(node, a, -1, start, end),
                                                       _slice_axis(node, b, b_axis, start, end))
        (product,) = node.emit("cast", [node.emit("mat_mul", list(pieces))[0]], {"to": _I32})
        total = product if total is None else node.emit("add", [total, product])[0]
    return total


_CONV_ATTRIBUTES = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _largest_sum(x_bound: int, w, w_bound: int, taps: int) -> int:
    """A bound on every partial sum of a convolution of inputs up to ``x_bound`` in
    magnitude by ``w`` (per output channel: x_bound times its filter's sum of magnitudes
    when ``w`` is known, which deep filters of real weights keep within f32's exact
    integers; else every tap at ``w_bound``)."""
    if isinstance(w, np.ndarray):
        return x_bound * int(np.abs(w.reshape(w.shape[0], -1).astype(np.int64)).sum(axis=1).max(initial=0))
    return x_bound * w_bound * taps


def _integer_conv(node: NodeBuilder, x_index: int, w_index: int, x_zero: int, w_zero: int, bias=None):
    """int32 conv of (x - x_zero) by (w - w_zero), w's zero point per output channel, plus
    the int32 ``bias``: an f32 convolution (the fast kernels) when every partial sum stays
    within f32's exact integers (``_largest_sum``), else an int32 one."""
    x, w = node.operand(x_index), node.operand(w_index)
    w_shape = node.spec(w).shape
    x, x_bound = _centered(node, x, x_zero, node.spec(x).shape, None)
    w, w_bound = _centered(node, w, w_zero, w_shape, 0)
    attrs = {name: node.attributes[name] for name in _CONV_ATTRIBUTES if name in node.attributes}
    if _largest_sum(x_bound, w, w_bound, int(np.prod(w_shape[1:]))) < EXACT_IN_F32:
        (y,) = node.emit("conv", [node.emit("cast", [v], {"to": "f32"})[0] for v in (x, w)], attrs)
        (y,) = node.emit("cast", [y], {"to": _I32})
    else:
        (y,) = node.emit("conv", [x, w], attrs)
    if bias is None:
        return y
    (bias,) = node.emit("reshape", [bias], {"shape": [w_shape[0]] + [1] * (len(w_shape) - 2)})
    return node.emit("add", [y, bias])[0]


@converter("MatMulInteger")
def _matmul_integer(node: NodeBuilder):
    return [_integer_matmul(node, 0, 1, 2, 3)]


@converter("ConvInteger")
def _conv_integer(node: NodeBuilder):
    return [_integer_conv(node, 0, 1, 2, 3)]


def _scale(node: NodeBuilder, index: int, rank: int, axis: int):
    """Scale ``index`` in f32, one value or one per index of ``axis`` of a rank-``rank`` result."""
    value = node.operand(index)
    spec = node.spec(value)
    shape = [] if spec.numel == 1 else [spec.numel] + [1] * (rank - axis - 1)
    (value,) = node.emit("reshape", [value], {"shape": shape})
    return node.emit("cast", [value], {"to": "f32"})[0] if spec.dtype != np.float32 else value


def _requantized(node: NodeBuilder, accumulator, factors: list, y_scale: int, y_zero: int):
    """Quantize accumulator * (the product of the ``factors`` scales, (index, axis), over
    y_scale) with scale 1: onnxruntime's requantization of an int32 accumulator."""
    rank = node.spec(accumulator).rank
    (multiplier,) = node.emit("mul", [_scale(node, index, rank, axis) for index, axis in factors])
    (multiplier,) = node.emit("div", [multiplier, _scale(node, y_scale, rank, 0)])
    (real,) = node.emit("mul", [node.emit("cast", [accumulator], {"to": "f32"})[0], multiplier])
    zero_point = _zero_point(node, y_zero, (), 0, np.uint8)
    if node.has_input(y_zero):
        (zero_point,) = node.emit("reshape", [zero_point], {"shape": []})
    return node.emit("quantize_linear", [real, _scalar(1, np.float32), zero_point])


@converter("QLinearMatMul")
def _qlinear_matmul(node: NodeBuilder):
    accumulator = _integer_matmul(node, 0, 3, 2, 5)
    rank = node.spec(accumulator).rank
    return _requantized(node, accumulator, [(1, rank - 2), (4, rank - 1)], 6, 7)


@converter("QLinearConv")
def _qlinear_conv(node: NodeBuilder):
    bias = None
    if node.has_input(8):
        bias = node.operand(8)
        if node.spec(bias).dtype != np.int32:
            node.unsupported(f"a bias of element type {dtype_name(node.spec(bias).dtype)} (int32 only)")
    accumulator = _integer_conv(node, 0, 3, 2, 5, bias)
    return _requantized(node, accumulator, [(1, 1), (4, 1)], 6, 7)
