"""Max and average pooling against onnxruntime, on the paths of codegen/cpu/depthwise.py
(a channel at a time: read in place, a padded plane, or column phases), windows.py
(rows narrower than a vector, global pooling) and pool_inputs.py (a pool of a channel
concat as the concat of its parts' pools; ReLU and clips moved past a max pool).

Kernel sizes 1 to 7, strides 1 to 3, symmetric and asymmetric pads, ceil mode,
dilations, count_include_pad, odd, prime and tiny planes, channel counts that are no
multiple of a vector, at 1 and 2 threads, for this CPU (AVX-512 here) and for AVX2
(x86-64-v3, which runs here too). Inputs are standard normal, so that every tap of a
window can win its max and a ReLU cuts about half the outputs; a tap one column off or
a lane read from the wrong phase changes the result by O(1). Tolerance: max pooling
(and ReLU / Clip of it) exactly; averages rtol 1e-5, atol 1e-6 (at most 49 terms
summed in another order than onnxruntime's, then one division).
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession

RNG = np.random.default_rng(4129)
TARGETS = [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)]


def check(nodes, inputs: dict, cpu: str, threads: int, exact: bool):
    graph = helper.make_graph(nodes, "pooling",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[0]
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, inputs)[0]
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


POOLS = [
    # op, channels, (h, w), kernel, strides, pads, extra attributes
    ("MaxPool", 19, (111, 111), 3, 2, [0, 0, 0, 0], {}),  # SqueezeNet: odd rows read in place (AVX-512)
    ("MaxPool", 7, (56, 56), 3, 2, [0, 0, 1, 1], {}),  # Inception v2: padded at the end, phases
    ("MaxPool", 5, (112, 112), 3, 2, [1, 1, 1, 1], {}),  # ResNet's stem pool
    ("MaxPool", 3, (224, 224), 2, 2, [0, 0, 0, 0], {}),  # VGG: phases that cover the whole buffer
    ("MaxPool", 6, (54, 54), 3, 2, [0, 0, 0, 0], {}),  # AlexNet
    ("MaxPool", 9, (27, 27), 3, 1, [1, 1, 1, 1], {}),  # Inception's pool branch, stride 1
    ("MaxPool", 4, (111, 111), 3, 2, [0, 0, 0, 0], {"ceil_mode": 1}),  # ceil mode: past the end
    ("MaxPool", 3, (61, 67), 3, 2, [1, 2, 0, 1], {"dilations": [2, 2]}),  # dilated, asymmetric pads, prime
    ("MaxPool", 5, (47, 53), 5, 3, [2, 2, 2, 2], {}),  # stride 3: phases
    ("MaxPool", 3, (13, 13), 3, 2, [0, 0, 0, 0], {}),  # narrower than a vector (windows.py)
    ("MaxPool", 2, (5, 3), 2, 1, [0, 0, 1, 1], {}),  # tiny
    ("MaxPool", 3, (40, 40), 1, 2, [0, 0, 0, 0], {}),  # a 1x1 window: a strided copy
    ("AveragePool", 7, (28, 28), 3, 1, [1, 1, 1, 1], {}),  # Inception v2's pool branch
    ("AveragePool", 5, (56, 56), 3, 2, [1, 1, 1, 1], {"count_include_pad": 1}),  # ShuffleNet
    ("AveragePool", 6, (56, 56), 2, 2, [0, 0, 0, 0], {}),  # DenseNet's transitions
    ("AveragePool", 3, (37, 71), 3, 2, [0, 1, 1, 0], {"ceil_mode": 1}),  # ceil mode, not counting the pad
    ("AveragePool", 11, (7, 7), 7, 1, [0, 0, 0, 0], {}),  # global: a reduction
    ("AveragePool", 3, (29, 29), 7, 2, [3, 3, 3, 3], {}),  # a 7x7 window with pads
]


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("op,c,hw,k,s,pads,attrs", POOLS)
def test_pooling(op, c, hw, k, s, pads, attrs, cpu, threads):
    x = RNG.standard_normal((1, c, *hw)).astype(np.float32)
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=pads, **attrs)
    check([node], {"x": x}, cpu, threads, exact=op == "MaxPool")


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("activation", ["Relu", "Clip"])
@pytest.mark.parametrize("op,c,hw,s,pads", [
    ("MaxPool", 3, (55, 55), 2, [0, 0, 0, 0]),  # SqueezeNet's fire modules
    ("MaxPool", 5, (56, 56), 2, [0, 0, 1, 1]),  # padded: each part padded as the concat was
    ("MaxPool", 4, (14, 14), 1, [1, 1, 1, 1]),  # narrow rows
    ("AveragePool", 3, (28, 28), 1, [1, 1, 1, 1]),  # Inception's: the concat split, the activation not moved
])
def test_pooling_of_activated_concat(op, c, hw, s, pads, activation, cpu, threads):
    """``op(concat(act(a), act(b), c))``: channel counts 3 + 8 + 5 (not vector multiples)."""
    inputs = {n: RNG.standard_normal((1, ch, *hw)).astype(np.float32) for n, ch in (("a", c), ("b", 8), ("c", 5))}
    act = {"Relu": {}, "Clip": {"min": -0.5, "max": 1.0}}[activation]
    nodes = [helper.make_node(activation, [n], [f"{n}1"]) if activation == "Relu"
             else helper.make_node("Clip", [n, "lo", "hi"], [f"{n}1"]) for n in "ab"]
    if activation == "Clip":
        nodes = [helper.make_node("Constant", [], ["lo"], value_float=act["min"]),
                 helper.make_node("Constant", [], ["hi"], value_float=act["max"])] + nodes
    nodes += [helper.make_node("Concat", ["a1", "b1", "c"], ["cat"], axis=1),
              helper.make_node(op, ["cat"], ["y"], kernel_shape=[3, 3], strides=[s, s], pads=pads)]
    check(nodes, inputs, cpu, threads, exact=op == "MaxPool")


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("order", ["relu-pool", "pool-relu"])
def test_max_pool_and_relu(order, cpu, threads):
    """ReLU before a max pool (moved after it) or after it (its epilogue)."""
    x = RNG.standard_normal((1, 6, 64, 64)).astype(np.float32)
    pool = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    if order == "relu-pool":
        nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MaxPool", ["r"], ["y"], **pool)]
    else:
        nodes = [helper.make_node("MaxPool", ["x"], ["p"], **pool), helper.make_node("Relu", ["p"], ["y"])]
    check(nodes, {"x": x}, cpu, threads, exact=True)
