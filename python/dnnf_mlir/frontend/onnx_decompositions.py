"""ONNX ops imported as compositions of existing ECG ops, registered in ``CONVERTERS``.

An op here has no ECG op of its own: it is what its ONNX function body says, built
from ECG ops that already carry mapping types, algebraic properties, reference
semantics and linalg lowerings, so it joins rewriting, fusion and both code
generators without code of its own there. This module holds the element-wise ones,
LpPool (around an average pool), CausalConvWithState (around a depthwise convolution),
and the constants: EyeLike, which reads only its
input's shape, and the window functions, which read only their size.
"""

import numpy as np

from ..ecg.tensor_spec import dtype_name, element_kind
from .casts import emit_cast
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError, onnx_dtype


def _float_operand(node: NodeBuilder):
    """Input 0, which must be a floating-point tensor, and its element type."""
    x = node.operand(0)
    dtype = node.spec(x).dtype
    if element_kind(dtype) != "f":
        node.unsupported(f"{node.info.op_type} on {dtype_name(dtype)} tensors (floating-point only)")
    return x, dtype


@converter("CastLike")
def _cast_like(node: NodeBuilder):
    """Cast input 0 to the element type of input 1 (whose values are not read)."""
    return emit_cast(node, node.operand(0), node.spec(node.operand(1)).dtype)


@converter("Swish")
def _swish(node: NodeBuilder):
    """x * sigmoid(alpha * x)."""
    x, dtype = _float_operand(node)
    scaled = node.emit_one("mul", [x, np.array(node.attr("alpha", 1.0), dtype)])
    return node.emit("mul", [x, node.emit_one("sigmoid", [scaled])])


@converter("Mish")
def _mish(node: NodeBuilder):
    """x * tanh(softplus(x))."""
    x, _ = _float_operand(node)
    return node.emit("mul", [x, node.emit_one("tanh", [node.emit_one("softplus", [x])])])


@converter("Celu")
def _celu(node: NodeBuilder):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) = elu(x / alpha) * alpha for alpha > 0."""
    x, dtype = _float_operand(node)
    alpha = np.array(node.attr("alpha", 1.0), dtype)
    negative = node.emit_one("mul", [node.emit_one("elu", [node.emit_one("div", [x, alpha])], alpha=1.0), alpha])
    return node.emit("add", [node.emit_one("relu", [x]), node.emit_one("min", [negative, np.zeros((), dtype)])])


@converter("ThresholdedRelu")
def _thresholded_relu(node: NodeBuilder):
    """x where x > alpha, else 0."""
    x, dtype = _float_operand(node)
    above = node.emit_one("greater", [x, np.array(node.attr("alpha", 1.0), dtype)])
    return node.emit("where", [above, x, np.zeros((), dtype)])


@converter("IsNaN")
def _is_nan(node: NodeBuilder):
    """x != x: only NaN differs from itself."""
    x, _ = _float_operand(node)
    return node.emit("not", [node.emit_one("equal", [x, x])])


@converter("IsInf")
def _is_inf(node: NodeBuilder):
    x, dtype = _float_operand(node)
    tests = []
    if node.attr("detect_positive", 1):
        tests.append(node.emit_one("equal", [x, np.array(np.inf, dtype)]))
    if node.attr("detect_negative", 1):
        tests.append(node.emit_one("equal", [x, np.array(-np.inf, dtype)]))
    if not tests:  # neither sign detected: all false
        return node.emit("expand", [np.zeros((), np.bool_)], {"shape": list(node.spec(x).shape)})
    return [tests[0]] if len(tests) == 1 else node.emit("or", tests)


@converter("EyeLike")
def _eye_like(node: NodeBuilder):
    """Ones on diagonal k of a 2-D tensor of input 0's shape: a constant (only the shape is read)."""
    spec = node.spec(node.operand(0))
    if spec.rank != 2:
        node.unsupported(f"EyeLike of a rank-{spec.rank} input (rank 2 only)")
    dtype = onnx_dtype(node.attr("dtype")) if node.attr("dtype") is not None else spec.dtype
    return [np.eye(*spec.shape, k=node.attr("k", 0), dtype=dtype)]


@converter("SwiGLU")
def _swiglu(node: NodeBuilder):
    """swish(a) * b, swish(a) = a * sigmoid(alpha * a); a and b of one shape."""
    a, dtype = _float_operand(node)
    b = node.operand(1)
    if node.spec(b).shape != node.spec(a).shape or node.spec(b).dtype != dtype:
        node.unsupported(f"inputs {node.spec(a)} and {node.spec(b)} (one shape and type, no broadcasting)")
    gate = node.emit_one("sigmoid", [node.emit_one("mul", [a, np.array(node.attr("alpha", 1.0), dtype)])])
    return node.emit("mul", [node.emit_one("mul", [a, gate]), b])


@converter("LpPool")
def _lp_pool(node: NodeBuilder):
    """(sum over the window of |x|**p)**(1/p): an average pool counting the padding, times the
    window's size; pads contribute |0|**p = 0."""
    x, dtype = _float_operand(node)
    p = node.attr("p", 2)
    if p <= 0:
        node.unsupported(f"p = {p}")
    attrs = {name: node.attributes[name] for name in ("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                                                          "strides") if name in node.attributes}
    powered = node.emit_one("abs", [x])
    if p != 1:
        powered = node.emit_one("pow", [powered, np.array(p, dtype)])
    average = node.emit_one("average_pool", [powered], **attrs, count_include_pad=1)
    total = node.emit_one("mul", [average, np.array(np.prod(node.attr("kernel_shape")), dtype)])
    if p == 1:
        return [total]
    return node.emit("sqrt", [total]) if p == 2 else node.emit("pow", [total, np.array(1.0 / p, dtype)])


def _window(node: NodeBuilder, terms) -> list:
    """A window of input 0's size: sum of coefficient * cos(multiple * 2 pi n / N) over ``terms``
    (coefficient, multiple), N the size (periodic) or the size - 1, computed in float64."""
    size = node.required(0, "size")
    if size.size != 1 or size.reshape(()) < 0:
        raise OnnxImportError(f"{node.info}: size must be a non-negative scalar, got {size.tolist()}")
    size = int(size.reshape(()))
    period = size if node.attr("periodic", 1) else size - 1
    phase = 2 * np.pi * np.arange(size) / period if period else np.zeros(size)
    window = sum(coefficient * np.cos(multiple * phase) for coefficient, multiple in terms)
    return [np.asarray(window).astype(onnx_dtype(node.attr("output_datatype", 1)))]


@converter("HannWindow")
def _hann_window(node: NodeBuilder):
    return _window(node, [(0.5, 0), (-0.5, 1)])


@converter("HammingWindow")
def _hamming_window(node: NodeBuilder):
    return _window(node, [(25 / 46, 0), (-21 / 46, 1)])


@converter("BlackmanWindow")
def _blackman_window(node: NodeBuilder):
    return _window(node, [(0.42, 0), (-0.5, 1), (0.08, 2)])


@converter("CausalConvWithState")
def _causal_conv_with_state(node: NodeBuilder):
    """A depthwise 1-D convolution over the past state (zeros without one) followed by the input,
    optionally SiLU (computed in float32); the present state is the last k - 1 frames of both."""
    x, dtype = _float_operand(node)
    weight = node.operand(1)
    (batch, channels, length), (_, _, k) = node.spec(x).shape, node.spec(weight).shape
    if node.spec(x).rank != 3 or node.spec(weight).shape[:2] != (channels, 1):
        raise OnnxImportError(f"{node.info}: input {node.spec(x)} and weight {node.spec(weight)} must be "
                              f"(batch, channels, length) and (channels, 1, k)")
    activation = node.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        node.unsupported(f"activation '{activation}'")
    past = node.operand(3) if node.has_input(3) else np.zeros((batch, channels, k - 1), dtype)
    padded = node.emit_one("concat", [past, x], axis=2) if k > 1 else x
    operands = [padded, weight] + ([node.operand(2)] if node.has_input(2) else [])
    y = node.emit_one("conv", operands, group=channels, kernel_shape=[k], pads=[0, 0], strides=[1], dilations=[1])
    if activation != "none":
        wide = y if dtype == np.float32 else node.emit_one("cast", [y], to="f32")
        y = node.emit_one("mul", [wide, node.emit_one("sigmoid", [wide])])
        y = y if dtype == np.float32 else node.emit_one("cast", [y], to=dtype_name(dtype))
    present = node.emit_one("slice", [padded], starts=[length], ends=[length + k - 1], axes=[2], steps=[1])
    return [y, present]
