"""Grouped 1x1 convolutions (a batch matmul over the groups) with their bias, ReLU,
residual add and ShuffleNet's channel shuffle as the matmul's epilogue
(``grouped_epilogues``; lit: test/Codegen/grouped-epilogues.mlir), compiled whole against
float64 and onnxruntime.

The cases are branches of one model compiled once per CPU (AVX-512 and AVX2) and thread
count: groups, input and output channels per group, plane, and what follows the
convolution: "shuffle" (bias, ReLU, Reshape [1, G, F, H, W] + Transpose + Reshape back),
"bn_shuffle" (BatchNormalization, ReLU, the shuffle), "residual" (bias, Add of the input,
ReLU), "bias" (bias alone). Odd and prime channel counts, planes of 1 x 13 to 28 x 28 (a
partial last register tile along the pixels and along the channels), 7 x 7 (a product
padded to whole tiles: the epilogue then a pass of its own, written shuffled).
Tolerance: 1e-5 + 1e-5 * |want| against float64, and no more than 8 times onnxruntime's
own error plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(2929)

# (kind, groups, input channels per group, output channels per group, h, w)
CASES = [
    ("shuffle", 4, 6, 7, 5, 9),
    ("shuffle", 3, 11, 34, 14, 14),
    ("bn_shuffle", 4, 8, 9, 3, 3),
    ("shuffle", 4, 28, 28, 28, 28),
    ("shuffle", 4, 24, 24, 7, 7),
    ("residual", 3, 5, 5, 7, 7),
    ("residual", 4, 17, 17, 6, 11),
    ("bias", 2, 3, 17, 1, 13),
]


def _value(name, array, initializers):
    initializers.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
    return np.asarray(array, np.float32).astype(np.float64)


def _case(index, case, feeds, inputs, initializers, nodes):
    """Build branch ``index``; returns its output's name and float64 result."""
    kind, g, c, f, h, w = case
    x = f"x{index}"
    feeds[x] = RNG.standard_normal((1, g * c, h, w)).astype(np.float32)
    inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, g * c, h, w]))
    weights = _value(f"w{index}", RNG.standard_normal((g * f, c, 1, 1)) / np.sqrt(c), initializers)
    xs = feeds[x].astype(np.float64).reshape(g, c, h * w)
    y = np.einsum("gfc,gcp->gfp", weights.reshape(g, f, c), xs).reshape(1, g * f, h, w)
    conv_inputs = [x, f"w{index}"]
    if kind != "bn_shuffle":
        bias = _value(f"b{index}", RNG.standard_normal(g * f), initializers)
        conv_inputs.append(f"b{index}")
        y = y + bias[None, :, None, None]
    nodes.append(helper.make_node("Conv", conv_inputs, [f"conv{index}"], group=g, kernel_shape=[1, 1]))
    last = f"conv{index}"
    if kind == "bn_shuffle":
        names = [f"{k}{index}" for k in ("scale", "shift", "mean", "var")]
        scale, shift, mean, var = (_value(n, v, initializers) for n, v in zip(names, (
            RNG.uniform(0.5, 1.5, g * f), RNG.standard_normal(g * f), RNG.standard_normal(g * f) * 0.1,
            RNG.uniform(0.5, 1.5, g * f))))
        nodes.append(helper.make_node("BatchNormalization", [last, *names], [f"bn{index}"]))
        per = lambda v: v[None, :, None, None]  # noqa: E731
        y = (y - per(mean)) / np.sqrt(per(var) + 1e-5) * per(scale) + per(shift)
        last = f"bn{index}"
    if kind == "residual":
        nodes.append(helper.make_node("Add", [last, x], [f"add{index}"]))
        y = y + feeds[x].astype(np.float64)
        last = f"add{index}"
    if kind != "bias":
        nodes.append(helper.make_node("Relu", [last], [f"relu{index}"]))
        y = np.maximum(y, 0)
        last = f"relu{index}"
    if kind.endswith("shuffle"):
        initializers.append(numpy_helper.from_array(np.array([1, g, f, h, w], np.int64), f"s{index}a"))
        initializers.append(numpy_helper.from_array(np.array([1, g * f, h, w], np.int64), f"s{index}b"))
        nodes.append(helper.make_node("Reshape", [last, f"s{index}a"], [f"r{index}"]))
        nodes.append(helper.make_node("Transpose", [f"r{index}"], [f"t{index}"], perm=[0, 2, 1, 3, 4]))
        nodes.append(helper.make_node("Reshape", [f"t{index}", f"s{index}b"], [f"y{index}"]))
        y = y.reshape(1, g, f, h, w).transpose(0, 2, 1, 3, 4).reshape(1, g * f, h, w)
        last = f"y{index}"
    return last, y


def _model():
    """The model of ``CASES``, its feeds, the case of each output and the float64 results."""
    graph = helper.make_graph([], "grouped_epilogues", [], [])
    feeds, inputs, initializers, nodes, wants = {}, [], [], [], []
    for index, case in enumerate(CASES):
        name, value = _case(index, case, feeds, inputs, initializers, nodes)
        graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
        wants.append(value)
    graph.input.extend(inputs)
    graph.initializer.extend(initializers)
    graph.node.extend(nodes)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, list(CASES), wants


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_grouped_epilogues_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, cases, wants = _model()
    check_branches(model, feeds, cases, wants, cpu, threads)
