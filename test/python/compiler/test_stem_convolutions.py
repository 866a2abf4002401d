"""Stride-2 first layers of few input channels on large images (``codegen/cpu/conv.py``:
the phases of ``split_strided_convolutions`` accumulated in the same register tiles, the
partial last column tile peeled so that the tiles write the model's output width; lit:
test/Codegen/stem-conv-tiles.mlir) and their neighbours, compiled whole against float64
and onnxruntime, on AVX-512 and AVX2, 1 and 2 threads.

Branches of one model: SqueezeNet's 3 -> 64 3x3/2 (111 columns: 3 tiles of 32 and a
peeled one of 15), ResNet's 7x7/2 with a batch norm (112 = 3 x 32 + 16), ShuffleNet's
3 -> 24 3x3/2 on two images, 4 input channels with a 5x5/2 window on odd sizes (38
columns: 6 peeled), a stride-1 neighbour (not split), asymmetric padding whose partial
tile is more than a vector (padded, not peeled: 50 columns), 34 columns (2 peeled), three
phases (5x5/3, 40 columns: 8 peeled); zero padding of an even-width image written with its
phases (``convolutions.padded_phases``: even and odd left padding, asymmetric, none on the
right) and a 225x225 image, whose odd width keeps the padded copy. Inputs standard normal, filters scaled by
1/sqrt(C*KH*KW) so outputs are O(1). Tolerance: 1e-5 + 1e-5 * |want| against float64
(sums of up to 196 f32 products), and no more than 8 times onnxruntime's own error plus
1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(2929)

# (n, c, f, h, w, k, stride, (top, left, bottom, right) pads, epilogue)
CASES = [
    (1, 3, 64, 224, 224, 3, 2, (0, 0, 0, 0), "Relu"),  # SqueezeNet
    (1, 3, 64, 224, 224, 7, 2, (3, 3, 3, 3), "BatchNormalization+Relu"),  # ResNet, Inception v2, DenseNet
    (2, 3, 24, 224, 224, 3, 2, (1, 1, 1, 1), "Relu"),  # ShuffleNet, two images
    (1, 4, 32, 61, 75, 5, 2, (2, 2, 2, 2), None),  # 4 channels, odd sizes
    (2, 3, 16, 40, 97, 3, 1, (1, 1, 1, 1), "Relu"),  # stride 1: not split
    (1, 3, 32, 50, 101, 7, 2, (3, 2, 3, 3), "BatchNormalization+Relu"),  # 50 columns: padded
    (1, 4, 64, 33, 67, 3, 2, (1, 1, 1, 1), "Relu"),  # 34 columns
    (1, 3, 16, 30, 120, 5, 3, (1, 1, 1, 1), None),  # three phases
    (1, 4, 32, 62, 76, 5, 2, (2, 2, 2, 2), "Relu"),  # even left padding: phases in place, unswapped
    (1, 3, 16, 97, 98, 7, 2, (3, 2, 1, 4), None),  # asymmetric padding, even left
    (1, 3, 24, 40, 64, 3, 2, (0, 1, 1, 0), "Relu"),  # odd left padding, none on the right
    (1, 3, 24, 225, 225, 3, 2, (1, 1, 1, 1), "Relu"),  # odd image: padded, then split
]


def _float64(x, weights, bias, stride, pads, norm):
    """The convolution with bias, then ``norm`` ((scale, shift) of a batch norm, or
    None) in float64, before any activation."""
    top, left, bottom, right = pads
    f, _, k, _ = weights.shape
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (top, bottom), (left, right)])
    oh, ow = (padded.shape[2] - k) // stride + 1, (padded.shape[3] - k) // stride + 1
    want = np.zeros((x.shape[0], f, oh, ow)) + bias.astype(np.float64)[None, :, None, None]
    for i in range(k):
        for j in range(k):
            window = padded[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            want += np.einsum("fc,nchw->nfhw", weights[:, :, i, j].astype(np.float64), window)
    if norm is not None:
        scale, shift = norm
        want = want * scale[None, :, None, None] + shift[None, :, None, None]
    return want


def _branch(index, case, nodes, initializers):
    """The nodes of branch ``index``; returns its input, its feed and its float64 result."""
    n, c, f, h, w, k, stride, pads, epilogue = case
    x, name = f"x{index}", f"conv{index}"
    weights = (RNG.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    feed = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    initializers += [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
    nodes.append(helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [name], kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pads[0], pads[1], pads[2], pads[3]]))
    norm = None
    if epilogue and epilogue.startswith("BatchNormalization"):
        gamma, beta = RNG.uniform(0.5, 1.5, f), RNG.standard_normal(f)
        mean, var = RNG.standard_normal(f), RNG.uniform(0.5, 2.0, f)
        names = [f"{p}{index}" for p in ("gamma", "beta", "mean", "var")]
        for p, v in zip(names, (gamma, beta, mean, var)):
            initializers.append(numpy_helper.from_array(v.astype(np.float32), p))
        nodes.append(helper.make_node("BatchNormalization", [name, *names], [f"bn{index}"], epsilon=1e-5))
        name = f"bn{index}"
        g, b, m, v = (t.astype(np.float32).astype(np.float64) for t in (gamma, beta, mean, var))
        scale = g / np.sqrt(v + np.float32(1e-5))
        norm = (scale, b - m * scale)
    want = _float64(feed, weights, bias, stride, pads, norm)
    if epilogue and epilogue.endswith("Relu"):
        nodes.append(helper.make_node("Relu", [name], [f"y{index}"]))
        want = np.maximum(want, 0)
    else:
        nodes.append(helper.make_node("Identity", [name], [f"y{index}"]))
    return helper.make_tensor_value_info(x, TensorProto.FLOAT, list(feed.shape)), feed, want


def _model():
    """The model of ``CASES`` (one branch each), its feeds and the float64 results."""
    nodes, initializers = [], []
    branches = [_branch(index, case, nodes, initializers) for index, case in enumerate(CASES)]
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(CASES))]
    graph = helper.make_graph(nodes, "stems", [value for value, _, _ in branches], outputs, initializers)
    feeds = {f"x{index}": feed for index, (_, feed, _) in enumerate(branches)}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, [want for *_, want in branches]


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_stem_convolutions_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, wants = _model()
    check_branches(model, feeds, CASES, wants, cpu, threads)
