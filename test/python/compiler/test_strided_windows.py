"""Depthwise convolutions and pooling with every stride, dilation and padding,
compiled for the host against onnxruntime (codegen/cpu/windows.py: horizontally
strided windows read the input split by column phase).

Odd and prime sizes, asymmetric pads, strides 2 and 3 with dilations 1 and 2, 3x3,
5x5 and 7x7 windows (MobileNetV2's, EfficientNet's and ConvNeXt's), a fused ReLU6 as
in MobileNetV2. Inputs standard normal, weights scaled to keep outputs O(1).
Tolerance: max pooling exactly; sums rtol 1e-5, atol 1e-5 (at most 49 products,
added in another order than onnxruntime's).
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession

RNG = np.random.default_rng(2029)


def run_both(nodes, x, constants):
    graph = helper.make_graph(nodes, "windows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, n) for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    got = InferenceSession(model, use_cache=False, threads=1).run(None, {"x": x})[0]
    assert got.shape == want.shape
    return got, want


@pytest.mark.parametrize("c,h,w,k,stride,dilation,pads", [
    (32, 112, 112, 3, 2, 1, [1, 1, 1, 1]),  # MobileNetV2's first strided depthwise layer
    (13, 29, 31, 3, 2, 1, [0, 1, 1, 0]),  # asymmetric pads, odd sizes
    (6, 37, 41, 5, 2, 2, [4, 4, 4, 4]),  # strided and dilated
    (5, 23, 47, 3, 3, 1, [1, 2, 0, 1]),  # stride 3: one phase per tap
    (8, 30, 60, 7, 2, 1, [3, 3, 3, 3]),  # a 7x7 window
    # Channel loops whose padded plane is filled once per block of channels and reused
    # (codegen/cpu/depthwise.py): plane, phases, and a plane then its phases (odd width).
    (96, 48, 48, 3, 2, 1, [0, 0, 1, 1]),
    (32, 48, 48, 3, 1, 1, [1, 1, 1, 1]),
    (20, 35, 67, 3, 2, 1, [1, 1, 1, 1]),
    # Rows narrower than a vector: ShuffleNet's and MobileNetV2's, in the loop from 8 columns.
    (272, 14, 14, 3, 1, 1, [1, 1, 1, 1]),
    (136, 28, 28, 3, 2, 1, [1, 1, 1, 1]),
    (144, 24, 24, 3, 2, 1, [0, 0, 1, 1]),
    (64, 6, 6, 3, 1, 1, [1, 1, 1, 1]),
    (96, 3, 3, 3, 1, 1, [1, 1, 1, 1]),
])
def test_depthwise_relu6(c, h, w, k, stride, dilation, pads):
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    constants = {"w": (RNG.standard_normal((c, 1, k, k)) / k).astype(np.float32),
                 "b": RNG.standard_normal(c).astype(np.float32),
                 "lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=c, strides=[stride, stride],
                              dilations=[dilation, dilation], pads=pads),
             helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    got, want = run_both(nodes, x, constants)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("c,h,stride,pads", [(24, 48, 2, [0, 0, 0, 0, 0, 0, 1, 1]), (16, 12, 1, [0, 0, 1, 1, 0, 0, 1, 1])])
def test_explicit_pad_before_depthwise(c, h, stride, pads):
    """MobileNetV2's Pad node before each depthwise convolution (folded into the
    convolution's pads by ecg-rewrite's conv-bias-pad) after a ReLU6."""
    x = RNG.standard_normal((1, c, h, h)).astype(np.float32)
    constants = {"w": (RNG.standard_normal((c, 1, 3, 3)) / 3).astype(np.float32),
                 "b": RNG.standard_normal(c).astype(np.float32),
                 "lo": np.array(0, np.float32), "hi": np.array(6, np.float32), "pads": np.array(pads, np.int64)}
    nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["r"]),
             helper.make_node("Pad", ["r", "pads"], ["p"]),
             helper.make_node("Conv", ["p", "w", "b"], ["c"], group=c, strides=[stride, stride]),
             helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    got, want = run_both(nodes, x, constants)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,h,w,k,stride,pads", [
    ("MaxPool", 111, 111, 3, 2, [0, 0, 0, 0]),
    ("MaxPool", 56, 57, 3, 2, [1, 1, 1, 1]),
    ("AveragePool", 35, 64, 3, 3, [1, 0, 1, 2]),
])
def test_strided_pooling(op, h, w, k, stride, pads):
    x = RNG.standard_normal((1, 6, h, w)).astype(np.float32)
    got, want = run_both([helper.make_node(op, ["x"], ["y"], kernel_shape=[k, k], strides=[stride, stride], pads=pads)],
                         x, {})
    if op == "MaxPool":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,stride,pads", [("MaxPool", 2, [1, 1, 1, 1]), ("AveragePool", 1, [0, 1, 1, 0])])
def test_pooling_with_epilogue(op, stride, pads):
    """A cheap element-wise consumer (Relu) computed in the window's generic (windows.taken_epilogue)."""
    x = RNG.standard_normal((1, 5, 45, 47)).astype(np.float32)
    nodes = [helper.make_node(op, ["x"], ["p"], kernel_shape=[3, 3], strides=[stride, stride], pads=pads),
             helper.make_node("Relu", ["p"], ["y"])]
    got, want = run_both(nodes, x, {})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
