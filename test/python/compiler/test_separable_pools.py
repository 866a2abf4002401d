"""Max and average pools computed in two passes (codegen/cpu/separable_pools.py: the
window's rows, then its strided columns) against onnxruntime: max pools exactly, a BN
epilogue and averages (their sums regrouped) within rtol 1e-5, atol 1e-6.

The shapes of the pools after the stems (ResNet-50 and ShuffleNet: 112 -> 56 padded by
one; SqueezeNet: 111 -> 55 unpadded; Inception v2: 56 -> 28 in ceil mode) and around
them: odd and prime widths, asymmetric pads (rows near an edge take fewer taps),
ceil mode, strides 1 to 3, kernels 2, 3 and 5, dilations, a BN-like epilogue and a
residual add, NaN inputs (a window holding a NaN gives NaN: against numpy, since
onnxruntime's MaxPool skips NaNs), and the
pools that keep the other paths: a 1-D pool, a max pool over an explicit zero Pad (the
zero must win over negative rows the two passes would leave out), at 1 and 2 threads,
for this CPU (AVX-512 here) and for AVX2 (x86-64-v3). Inputs are standard normal, so
that every tap can win its window: one row or column off changes the result.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession

RNG = np.random.default_rng(2957)
TARGETS = [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)]


def check(nodes, x, cpu: str, threads: int, initializers=(), exact: bool = True):
    graph = helper.make_graph(nodes, "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, {"x": x})[0]
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:  # sums in another order, BN folded into a scale and a shift: an ulp or two
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


POOLS = [
    # channels, (h, w), kernel, strides, pads (top, left, bottom, right), extra attributes
    (5, (112, 112), 3, 2, [1, 1, 1, 1], {}),  # ResNet-50 / ShuffleNet after the stem
    (3, (111, 111), 3, 2, [0, 0, 0, 0], {}),  # SqueezeNet
    (7, (56, 56), 3, 2, [0, 0, 0, 0], {"ceil_mode": 1}),  # Inception v2
    (4, (61, 67), 3, 2, [2, 0, 0, 1], {}),  # prime sizes, asymmetric pads: two top rows of 2 taps
    (3, (53, 59), 5, 3, [2, 2, 2, 2], {}),  # stride 3 (columns: phases), rows 5 taps
    (6, (29, 31), 5, 1, [2, 2, 2, 2], {}),  # stride 1, kernel 5: rows of 3, 4, 5 taps
    (3, (97, 97), 2, 2, [0, 0, 0, 0], {"ceil_mode": 1}),  # kernel 2, the last row and column past the end
    (2, (47, 45), 3, 2, [1, 1, 1, 1], {"dilations": [2, 2]}),  # dilated rows and columns
    (9, (27, 27), 3, 1, [1, 1, 1, 1], {}),  # Inception's pool branch
    (2, (33, 17), 3, 2, [1, 1, 1, 1], {}),  # rows of 9 outputs: narrower than a vector
]


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("c,hw,k,s,pads,attrs", POOLS)
def test_max_pool(c, hw, k, s, pads, attrs, cpu, threads):
    x = RNG.standard_normal((1, c, *hw)).astype(np.float32)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=pads, **attrs)
    check([node], x, cpu, threads)


AVERAGE_POOLS = [
    # channels, (h, w), kernel, strides, pads, extra attributes
    (7, (28, 28), 3, 1, [1, 1, 1, 1], {}),  # Inception v2's pool branch: edge rows and columns of 2 taps
    (5, (56, 56), 3, 2, [1, 1, 1, 1], {"count_include_pad": 1}),  # ShuffleNet
    (3, (37, 71), 3, 2, [0, 1, 1, 0], {"ceil_mode": 1}),  # ceil mode, not counting the pad
    (4, (29, 31), 5, 1, [2, 2, 2, 2], {}),  # 5x5, prime sizes
]


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("c,hw,k,s,pads,attrs", AVERAGE_POOLS)
def test_average_pool(c, hw, k, s, pads, attrs, cpu, threads):
    """Sums regrouped by column: within rtol 1e-5 (at most 25 terms, then a division)."""
    x = RNG.standard_normal((1, c, *hw)).astype(np.float32)
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=pads, **attrs)
    check([node], x, cpu, threads, exact=False)


def nan_max_pool(x, k: int, s: int, pad: int):
    """numpy's max pool of ``x`` (-inf padding) where a NaN anywhere in a window wins
    (ECG's max pool: ``maximumf``; onnxruntime's MLAS skips NaNs)."""
    padded = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)], constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    return windows.max(axis=(-2, -1))


@pytest.mark.parametrize("cpu,threads", TARGETS)
def test_nan_wins_its_windows(cpu, threads):
    """NaNs in a corner, at the edges and inside: every window holding one gives NaN,
    against numpy (the NaN semantics of the one-pass windows)."""
    x = RNG.standard_normal((1, 4, 112, 112)).astype(np.float32)
    x[0, 0, 0, 0] = x[0, 1, 111, 57] = x[0, 2, 40, 111] = x[0, 3, 63, 63] = np.nan
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, {"x": x})[0]
    want = nan_max_pool(x, 3, 2, 1)
    assert np.isnan(want).sum() == 1 + 2 + 1 + 4  # windows holding each: the corner's, the edges', the inside one's
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("epilogue", ["bn-relu", "residual"])
def test_max_pool_epilogue(epilogue, cpu, threads):
    """DenseNet's max pool + BN + ReLU, and an add of another tensor read per element,
    computed in the second pass's registers."""
    c = 5
    x = RNG.standard_normal((1, c, 112, 112)).astype(np.float32)
    pool = helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    if epilogue == "bn-relu":
        values = [RNG.standard_normal(c).astype(np.float32) for _ in range(3)] + [RNG.uniform(0.5, 2, c).astype(np.float32)]
        inits = [numpy_helper.from_array(v, n) for v, n in zip(values, ["scale", "bias", "mean", "var"])]
        nodes = [pool, helper.make_node("BatchNormalization", ["p", "scale", "bias", "mean", "var"], ["b"]),
                 helper.make_node("Relu", ["b"], ["y"])]
    else:
        inits = [numpy_helper.from_array(RNG.standard_normal((1, c, 56, 56)).astype(np.float32), "r")]
        nodes = [pool, helper.make_node("Add", ["p", "r"], ["y"])]
    check(nodes, x, cpu, threads, inits, exact=epilogue == "residual")


@pytest.mark.parametrize("cpu,threads", TARGETS)
def test_max_pool_of_zero_pad(cpu, threads):
    """An explicit zero Pad before the pool: its zeros count (not left out as -inf
    rows are), so the pool keeps the one-pass path; negative inputs show the difference."""
    x = -np.abs(RNG.standard_normal((1, 3, 56, 56))).astype(np.float32)
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
    nodes = [helper.make_node("Pad", ["x", "pads"], ["xp"]),
             helper.make_node("MaxPool", ["xp"], ["y"], kernel_shape=[3, 3], strides=[2, 2])]
    check(nodes, x, cpu, threads, [pads])


@pytest.mark.parametrize("cpu,threads", TARGETS)
def test_one_dimensional_max_pool(cpu, threads):
    """A 1-D pool (one row per channel: nothing to split) keeps the one-pass path."""
    x = RNG.standard_normal((1, 6, 101)).astype(np.float32)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], pads=[1, 1])
    check([node], x, cpu, threads)
