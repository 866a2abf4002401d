"""Depthwise convolutions as loops over channels (codegen/cpu/depthwise.py) and, on planes
narrower than a vector, as flat rows (codegen/cpu/flat_planes.py), compiled for the
host, on 1 and 2 threads, for AVX-512 (this machine) and AVX2 (``x86-64-v3``: 8
lanes, so other rows are split by phase, and 14-wide rows take the channel loops),
against onnxruntime.

What the rewrite decides is varied: the channel blocks (a prime count: blocks of one
channel; 58 = 2 x 29, ShuffleNet's; 144 = 16 x 9), the padded plane (symmetric,
asymmetric, none), the phase buffer of a wide strided window (left padding 1: one more
zero column; 2: none; an odd width: the padded plane split instead), dilation, 3x3 and
5x5, and the epilogue: moved into the taps' generic (bias only, ReLU6 (Clip), a
residual Add of another input) or kept apart (SiLU, x * Sigmoid(x): expensive; a
convolution whose result two ops read). Small planes vary the flat row: 7x7, 6x6, 3x3
and a plane smaller than its 5x5 window, dilation with asymmetric pads, no padding
(zero rows added at the bottom only), SiLU in the generic (3x3 window) or apart on
the copied output (5x5), a residual left apart; stride 2 with 5x5 windows (phase
planes) and 3x3 ones (whole-tensor taps), odd and non-square inputs, with and
without padding, dilated. Inputs standard normal, weights scaled by 1 / k to keep
outputs O(1); tolerance rtol 1e-5, atol 1e-5 (at most 25 products added in another
order than onnxruntime's; SiLU through the code generator's exp approximation).
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession

RNG = np.random.default_rng(2931)


def compare(nodes, inputs: dict, constants: dict, threads: int, cpu: str):
    graph = helper.make_graph(nodes, "depthwise", [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
                                                   for n, v in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, n) for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[0]
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, inputs)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def depthwise(c, k, stride, dilation, pads):
    """The Conv node and its constants."""
    constants = {"w": (RNG.standard_normal((c, 1, k, k)) / k).astype(np.float32),
                 "b": RNG.standard_normal(c).astype(np.float32)}
    node = helper.make_node("Conv", ["x", "w", "b"], ["c"], group=c, strides=[stride, stride],
                            dilations=[dilation, dilation], pads=pads)
    return node, constants


EPILOGUES = {
    "bias": lambda: ([helper.make_node("Identity", ["c"], ["y"])], {}),
    "relu6": lambda: ([helper.make_node("Clip", ["c", "lo", "hi"], ["y"])],
                      {"lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}),
    "silu": lambda: ([helper.make_node("Sigmoid", ["c"], ["s"]), helper.make_node("Mul", ["c", "s"], ["y"])], {}),
    "two-users": lambda: ([helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Sub", ["c", "r"], ["y"])], {}),
}


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"])
@pytest.mark.parametrize("c,h,w,k,stride,dilation,pads,epilogue,threads", [
    (144, 28, 28, 3, 1, 1, [1, 1, 1, 1], "relu6", 2),  # MobileNetV2's stride-1 layer (smaller)
    (7, 19, 23, 3, 1, 1, [0, 1, 1, 0], "silu", 1),  # a prime channel count, asymmetric pads
    (58, 14, 14, 3, 1, 1, [1, 1, 1, 1], "bias", 2),  # ShuffleNet's: two blocks of 29 channels
    (16, 40, 38, 5, 1, 2, [4, 3, 4, 5], "two-users", 1),  # dilated 5x5
    (11, 25, 27, 3, 1, 1, [0, 0, 0, 0], "relu6", 2),  # no padding: the channel read in place
    (24, 80, 80, 3, 2, 1, [1, 1, 1, 1], "relu6", 2),  # strided, wide: phases with one more zero column
    (10, 70, 72, 5, 2, 1, [2, 2, 2, 2], "silu", 1),  # EfficientNet's 5x5 / 2: phases without
    (9, 69, 69, 3, 2, 1, [0, 1, 1, 0], "bias", 2),  # an odd width: the padded plane split by phase
    (12, 66, 66, 3, 2, 2, [2, 2, 2, 2], "two-users", 1),  # strided and dilated
])
def test_depthwise_against_onnxruntime(c, h, w, k, stride, dilation, pads, epilogue, threads, cpu):
    conv, constants = depthwise(c, k, stride, dilation, pads)
    tail, more = EPILOGUES[epilogue]()
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    compare([conv, *tail], {"x": x}, constants | more, threads, cpu)


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"])
@pytest.mark.parametrize("c,h,w,k,dilation,pads,epilogue,threads", [
    (37, 7, 7, 5, 1, [2, 2, 2, 2], "silu", 1),  # EfficientNet's 7x7, 5x5: SiLU apart, on the copied output
    (13, 6, 6, 3, 1, [1, 1, 1, 1], "relu6", 2),  # MobileNetV2's 6x6: ReLU6 in the generic
    (5, 3, 3, 3, 1, [1, 1, 1, 1], "silu", 2),  # 3x3, 3x3: SiLU in the generic
    (7, 3, 3, 5, 1, [2, 2, 2, 2], "silu", 1),  # a plane smaller than the window
    (11, 5, 9, 3, 2, [2, 1, 2, 3], "bias", 1),  # dilated, asymmetric pads, an odd plane
    (17, 9, 11, 3, 1, [0, 0, 0, 0], "two-users", 2),  # no padding: zero rows added at the bottom only
    (9, 14, 14, 5, 1, [2, 2, 2, 2], "silu", 2),  # 14-wide rows: flat on AVX-512, channel loops on AVX2
])
def test_small_planes_against_onnxruntime(c, h, w, k, dilation, pads, epilogue, threads, cpu):
    """Planes narrower than a vector, each computed as one flat row (codegen/cpu/flat_planes.py)."""
    conv, constants = depthwise(c, k, 1, dilation, pads)
    tail, more = EPILOGUES[epilogue]()
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    compare([conv, *tail], {"x": x}, constants | more, threads, cpu)


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"])
@pytest.mark.parametrize("c,h,w,k,dilation,pads,epilogue,threads", [
    (13, 23, 23, 5, 1, [2, 2, 2, 2], "relu6", 1),  # DeepLab's 5x5/2 (12x12 out): phase planes on AVX-512
    (7, 27, 27, 5, 1, [0, 0, 0, 0], "silu", 2),  # EfficientNet's, its input padded before: SiLU apart
    (11, 24, 24, 5, 1, [1, 1, 2, 2], "bias", 1),  # asymmetric pads
    (5, 17, 13, 5, 1, [0, 0, 0, 0], "bias", 2),  # 7x5 out: phase planes on AVX2, a zeroed tail read
    (9, 13, 13, 5, 1, [2, 2, 2, 2], "silu", 1),  # 7x7 out: phase planes on AVX2, whole-tensor taps on AVX-512
    (6, 29, 25, 5, 2, [4, 3, 4, 5], "two-users", 1),  # strided and dilated: the taps read two of the planes
    (17, 25, 25, 3, 1, [0, 0, 0, 0], "relu6", 2),  # MobileNetV2's 3x3/2: whole-tensor taps
])
def test_strided_small_planes_against_onnxruntime(c, h, w, k, dilation, pads, epilogue, threads, cpu):
    """Stride 2 on planes narrower than a vector: 5x5 windows on rows over half a vector
    read the input split into phase planes (codegen/cpu/flat_planes.py)."""
    conv, constants = depthwise(c, k, 2, dilation, pads)
    tail, more = EPILOGUES[epilogue]()
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    compare([conv, *tail], {"x": x}, constants | more, threads, cpu)


@pytest.mark.parametrize("shape", [(1, 32, 20, 20), (2, 19, 5, 5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_residual_epilogue(threads, shape):
    """An Add of a second input of the output's shape: its slice of each channel is read
    (in the channel loops), or it stays apart (a small plane's flat rows)."""
    conv, constants = depthwise(shape[1], 3, 1, 1, [1, 1, 1, 1])
    x = RNG.standard_normal(shape).astype(np.float32)
    skip = RNG.standard_normal(shape).astype(np.float32)
    compare([conv, helper.make_node("Add", ["c", "skip"], ["y"])], {"x": x, "skip": skip}, constants, threads, "native")
