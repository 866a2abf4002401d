"""The direct convolution's register tile (``tiles.conv_vector_tile``) by CPU: on AVX2
(x86-64-v3, 16 registers) its accumulators take three quarters of them, 6 output
channels x 2 vectors where the channels divide by 6 (else 4 x 2); on AVX-512
(x86-64-v4) half, 8 x 2. Each case: an ONNX Conv + ReLU against onnxruntime, tolerance
1e-4 of the output's largest magnitude (float32 sums of at most 605 terms in another
order), at 1 and 2 threads."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from compile_helpers import compile_onnx

# input channels, output channels, height, width, kernel, stride, pad, threads,
# output channels of the tile on AVX2 and on AVX-512
CASES = [
    (8, 24, 12, 20, 3, 1, 1, 1, 6, 8),  # 3x3 over rows of whole vectors
    (5, 48, 41, 39, 5, 2, 2, 2, 6, 8),  # strided, odd plane: phases
    (3, 96, 99, 99, 11, 4, 0, 1, 6, 8),  # AlexNet's stem, smaller
    (16, 16, 10, 30, 3, 1, 1, 2, 4, 8),  # channels that 6 does not divide: 4 on AVX2
]


def conv_relu(c, f, h, w, k, stride, pad, seed):
    """A Conv (bias) + Relu model with seeded random weights, and its feeds."""
    rng = np.random.default_rng(seed)
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    weights = (rng.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, f).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k], pads=[pad] * 4, strides=[stride] * 2),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, oh, ow])],
                              [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"x": rng.standard_normal((1, c, h, w)).astype(np.float32)}


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"c{c[0]}f{c[1]}-{c[2]}x{c[3]}-k{c[4]}s{c[5]}p{c[6]}-t{c[7]}")
def test_conv_register_tile_matches_onnxruntime(case, cpu):
    c, f, h, w, k, stride, pad, threads, avx2_channels, avx512_channels = case
    model, feeds = conv_relu(c, f, h, w, k, stride, pad, seed=CASES.index(case))
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got, schedules = compile_onnx(model, feeds, cpu, threads)
    tiles = {schedule.details["register_tile"] for schedule in schedules if schedule.strategy == "conv2d"}
    assert {channels for channels, _ in tiles} == {avx2_channels if cpu == "x86-64-v3" else avx512_channels}, tiles
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())
