"""A per-channel element-wise op over a channel concat computed piece by piece, each piece
copied into the concat in the same pass (``concat_pointwise``; lit:
test/Codegen/concat-pointwise.mlir), compiled whole against float64 and onnxruntime.

The cases are branches of one model compiled once per CPU (AVX-512 and AVX2) and thread
count: DenseNet's layer (earlier channels, a 3x3 convolution's new ones, batch
normalization + ReLU of the concat; the concat an output too) on odd planes; three pieces
scaled and shifted per channel by [1, C, 1, 1] tensors (Mul, Add), the concat an output
too; three pieces under a ReLU alone, the concat not an output; a plane of 7x7 (rows of 49,
one plane a row). Tolerance: 1e-5 + 1e-5 * |want| against float64, and no more than 8
times onnxruntime's own error plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(4409)

# (kind, piece channels, h, w): the last piece of "dense" is a 3x3 convolution's output
CASES = [
    ("dense", (13, 8), 9, 11),
    ("affine", (5, 7, 3), 6, 10),
    ("relu", (4, 9, 6), 5, 13),
    ("dense", (21, 16), 7, 7),
]


def _value(name, array, initializers):
    initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
    return array.astype(np.float32).astype(np.float64)


def _case(index, case, feeds, inputs, initializers, nodes):
    """Build branch ``index``; returns its outputs' names and float64 results."""
    kind, channels, h, w = case
    pieces, wants = [], []
    for p, c in enumerate(channels):
        name = f"x{index}_{p}"
        feeds[name] = RNG.standard_normal((1, c, h, w)).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, c, h, w]))
        pieces.append(name)
        wants.append(feeds[name].astype(np.float64))
    if kind == "dense":  # the last piece is the 3x3 convolution of a 12-channel input
        c = channels[-1]
        feeds[pieces[-1]] = RNG.standard_normal((1, 12, h, w)).astype(np.float32)
        inputs[-1] = helper.make_tensor_value_info(pieces[-1], TensorProto.FLOAT, [1, 12, h, w])
        weights = _value(f"w{index}", RNG.standard_normal((c, 12, 3, 3)) / np.sqrt(108), initializers)
        nodes.append(helper.make_node("Conv", [pieces[-1], f"w{index}"], [f"conv{index}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        padded = np.pad(feeds[pieces[-1]].astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
        wants[-1] = sum(np.einsum("fc,nchw->nfhw", weights[:, :, i, j], padded[:, :, i:i + h, j:j + w])
                        for i in range(3) for j in range(3))
        pieces[-1] = f"conv{index}"
    cat = np.concatenate(wants, axis=1)
    total = cat.shape[1]
    nodes.append(helper.make_node("Concat", pieces, [f"cat{index}"], axis=1))
    y = f"y{index}"
    if kind == "dense":
        names = [f"{k}{index}" for k in ("scale", "shift", "mean", "var")]
        scale, shift, mean, var = (_value(n, v, initializers) for n, v in zip(names, (
            RNG.uniform(0.5, 1.5, total), RNG.standard_normal(total), RNG.standard_normal(total) * 0.1,
            RNG.uniform(0.5, 1.5, total))))
        nodes.append(helper.make_node("BatchNormalization", [f"cat{index}", *names], [f"bn{index}"]))
        nodes.append(helper.make_node("Relu", [f"bn{index}"], [y]))
        per = lambda v: v[None, :, None, None]  # noqa: E731
        return [f"cat{index}", y], [cat, np.maximum((cat - per(mean)) / np.sqrt(per(var) + 1e-5) * per(scale) + per(shift), 0)]
    if kind == "affine":
        scale = _value(f"s{index}", RNG.standard_normal((1, total, 1, 1)), initializers)
        shift = _value(f"b{index}", RNG.standard_normal((1, total, 1, 1)), initializers)
        nodes.append(helper.make_node("Mul", [f"cat{index}", f"s{index}"], [f"m{index}"]))
        nodes.append(helper.make_node("Add", [f"m{index}", f"b{index}"], [y]))
        return [f"cat{index}", y], [cat, cat * scale + shift]
    nodes.append(helper.make_node("Relu", [f"cat{index}"], [y]))
    return [y], [np.maximum(cat, 0)]


def _model():
    """The model of ``CASES``, its feeds, the case of each output and the float64 results."""
    graph = helper.make_graph([], "pointwise_over_concat_pieces", [], [])
    feeds, inputs, initializers, nodes, cases, wants = {}, [], [], [], [], []
    for index, case in enumerate(CASES):
        names, values = _case(index, case, feeds, inputs, initializers, nodes)
        graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names)
        cases += [case] * len(names)
        wants += values
    graph.input.extend(inputs)
    graph.initializer.extend(initializers)
    graph.node.extend(nodes)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, cases, wants


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_pointwise_over_concat_pieces_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, cases, wants = _model()
    check_branches(model, feeds, cases, wants, cpu, threads)
