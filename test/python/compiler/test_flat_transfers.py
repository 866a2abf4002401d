"""Contiguous n-D vector transfers flattened into 1-D ones, except in functions whose loops
carry vectors of one-element rows (``codegen/cpu/flat_transfers.py``; lit:
test/Codegen/flat-transfers.mlir), compiled whole against float64 and onnxruntime.

The cases are branches of one model compiled once per CPU (AVX-512 and AVX2) and thread
count: EfficientNet's squeeze-and-excitation blocks (global average pool, a 1x1
convolution on the ``[C, 1, 1]`` vector with SiLU, a second one with Sigmoid scaling the
input: matrix-vector accumulators of 16 one-element rows, left unflattened) at three
sizes; 1x1 convolutions onto 3x3 and 5x5 planes (output tiles of 9 and 25 contiguous
floats per channel, flattened); a depthwise 3x3/2 convolution on an odd plane. Inputs
standard normal, filters scaled by 1/sqrt(fan-in) so outputs are O(1). Tolerance: 1e-5 +
1e-5 * |want| against float64, and no more than 8 times onnxruntime's own error plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(2929)

# ("se", channels, reduced, h, w) | ("pointwise", c, f, h, w) | ("depthwise", c, h, w)
CASES = [
    ("se", 1152, 48, 3, 3),  # EfficientNet's last blocks
    ("se", 672, 28, 6, 6),
    ("se", 40, 10, 5, 7),  # fewer channels than one accumulator tile of 16 rows
    ("pointwise", 320, 1280, 3, 3),  # 16 x 9 output tiles: one store of 144
    ("pointwise", 37, 100, 5, 5),
    ("depthwise", 24, 19, 19),
]


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _weights(shape):
    fan_in = int(np.prod(shape[1:]))
    return (RNG.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def _squeeze_excite(index, case, x, feeds):
    """Nodes, initializers and the float64 result of a squeeze-and-excitation block."""
    _, c, r, h, w = case
    feeds[x] = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    w1, b1, w2, b2 = _weights((r, c, 1, 1)), _weights((r, 1)).ravel(), _weights((c, r, 1, 1)), _weights((c, 1)).ravel()
    p = f"p{index}"
    names = [f"{p}_{n}" for n in ("pool", "c1", "s1", "silu", "c2", "gate")]
    nodes = [helper.make_node("GlobalAveragePool", [x], [names[0]]),
             helper.make_node("Conv", [names[0], f"{p}w1", f"{p}b1"], [names[1]]),
             helper.make_node("Sigmoid", [names[1]], [names[2]]),
             helper.make_node("Mul", [names[1], names[2]], [names[3]]),
             helper.make_node("Conv", [names[3], f"{p}w2", f"{p}b2"], [names[4]]),
             helper.make_node("Sigmoid", [names[4]], [names[5]]),
             helper.make_node("Mul", [x, names[5]], [f"y{index}"])]
    initializers = [numpy_helper.from_array(a, f"{p}{n}") for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    x64 = feeds[x].astype(np.float64)
    pooled = x64.mean(axis=(2, 3))[0]
    hidden = w1[:, :, 0, 0].astype(np.float64) @ pooled + b1
    hidden = hidden * _sigmoid(hidden)
    gate = _sigmoid(w2[:, :, 0, 0].astype(np.float64) @ hidden + b2)
    return nodes, initializers, x64 * gate[None, :, None, None]


def _pointwise(index, case, x, feeds):
    """A 1x1 convolution with bias and ReLU."""
    _, c, f, h, w = case
    feeds[x] = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights, bias = _weights((f, c, 1, 1)), RNG.standard_normal(f).astype(np.float32)
    nodes = [helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [f"conv{index}"]),
             helper.make_node("Relu", [f"conv{index}"], [f"y{index}"])]
    initializers = [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
    want = np.einsum("fc,nchw->nfhw", weights[:, :, 0, 0].astype(np.float64), feeds[x].astype(np.float64))
    return nodes, initializers, np.maximum(want + bias.astype(np.float64)[None, :, None, None], 0)


def _depthwise(index, case, x, feeds):
    """A depthwise 3x3 convolution of stride 2, padding 1, with bias."""
    _, c, h, w = case
    feeds[x] = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights, bias = _weights((c, 1, 3, 3)), RNG.standard_normal(c).astype(np.float32)
    nodes = [helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [f"y{index}"], group=c, kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1])]
    initializers = [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
    padded = np.pad(feeds[x].astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    oh, ow = (h - 1) // 2 + 1, (w - 1) // 2 + 1
    want = np.zeros((1, c, oh, ow)) + bias.astype(np.float64)[None, :, None, None]
    for i in range(3):
        for j in range(3):
            want += weights[None, :, 0, i, j, None, None] * padded[:, :, i:i + 2 * oh - 1:2, j:j + 2 * ow - 1:2]
    return nodes, initializers, want


BUILDERS = {"se": _squeeze_excite, "pointwise": _pointwise, "depthwise": _depthwise}


def _model():
    """The model of ``CASES`` (one branch each), its feeds and the float64 results."""
    inputs, nodes, initializers, feeds, wants = [], [], [], {}, []
    for index, case in enumerate(CASES):
        x = f"x{index}"
        case_nodes, case_initializers, want = BUILDERS[case[0]](index, case, x, feeds)
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, list(feeds[x].shape)))
        nodes += case_nodes
        initializers += case_initializers
        wants.append(want)
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(CASES))]
    model = helper.make_model(helper.make_graph(nodes, "flat_transfers", inputs, outputs, initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, feeds, wants


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_flat_transfers_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, wants = _model()
    check_branches(model, feeds, CASES, wants, cpu, threads)
