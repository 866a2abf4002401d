"""LRN on the GPU profiles that block channels (lavapipe, PoCL) end to end: computed in
NC4HW4 with no NCHW copy before it where its channels fill their blocks (8), on an NCHW
copy where they do not (6, 7), windows of 3 and 5; merged into the pooling that reads it
(``fusion/lrn_pools.py``) on lavapipe (``GpuDevice.lrn_in_pools``; PoCL keeps the
pooling apart) for max and average poolings 3x3 / 2, 2x2 / 2, not for padded ones or in
ceil mode (a kernel of their own); a classifier's flattening of the blocked pooling in
the pooling's kernel.
Each graph run on the device found and compared with onnxruntime within
``checking.compare``'s tolerance (3e-5 + 1e-4 * |want| per element) on standard normal
inputs (a LRN's bias of 1 keeps its divisor away from 0); the kernels dispatched
counted; every SPIR-V binary passes spirv-val."""

import numpy as np
import onnx
import pytest
from gpu_artifacts import artifact_cache, assert_matches_onnxruntime, assert_spirv_valid, dispatched_kernels
from onnx import TensorProto, helper, numpy_helper
from test_models import compile_and_check

DEVICES = {"vulkan": "lavapipe", "opencl": "pocl"}
MERGES = {"vulkan": True, "opencl": False}  # the LRN in its unpadded pooling's kernel
COPY = "kernel_nc4hw4_to_nchw_"


def _model(nodes, x_shape, y_shape, weights: dict):
    rng = np.random.default_rng(11)
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)
                    for name, shape in weights.items()]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _lrn_between(channels: int, size: int):
    """A 3x3 convolution to ``channels``, relu, LRN, a 3x3 convolution to 4 channels."""
    node = helper.make_node
    return _model([
        node("Conv", ["x", "w0", "b0"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"]),
        node("LRN", ["r"], ["l"], size=size, alpha=0.01, beta=0.75, bias=1.0),
        node("Conv", ["l", "w1"], ["y"], pads=[1, 1, 1, 1])],
        [1, 3, 7, 7], [1, 4, 7, 7], {"w0": [channels, 3, 3, 3], "b0": [channels], "w1": [4, channels, 3, 3]})


def _out_size(size: int, kernel: int, stride: int, pads: int, ceil: bool) -> int:
    span = size + 2 * pads - kernel
    return (-(-span // stride) if ceil else span // stride) + 1


def _lrn_pool(pool: str, kernel: int, stride: int, pads: int = 0, ceil: bool = False, channels: int = 8):
    """A 3x3 convolution to ``channels``, relu, LRN (5), a pooling, a 1x1 convolution to 4."""
    node = helper.make_node
    out = _out_size(10, kernel, stride, pads, ceil)
    return _model([
        node("Conv", ["x", "w0", "b0"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"]),
        node("LRN", ["r"], ["l"], size=5, alpha=0.01, beta=0.75, bias=1.0),
        node(pool, ["l"], ["p"], kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pads] * 4,
             ceil_mode=int(ceil)),
        node("Conv", ["p", "w1"], ["y"])],
        [1, 3, 10, 10], [1, 4, out, out], {"w0": [channels, 3, 3, 3], "b0": [channels], "w1": [4, channels, 1, 1]})


def _pool_flatten():
    """A 3x3 convolution to 8, relu, LRN, max-pooling 2x2 / 2, Flatten, Gemm."""
    node = helper.make_node
    return _model([
        node("Conv", ["x", "w0", "b0"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"]),
        node("LRN", ["r"], ["l"], size=3, alpha=0.01, beta=0.75, bias=1.0),
        node("MaxPool", ["l"], ["p"], kernel_shape=[2, 2], strides=[2, 2]), node("Flatten", ["p"], ["f"]),
        node("Gemm", ["f", "wg", "bg"], ["y"], transB=1)],
        [1, 3, 6, 6], [1, 5], {"w0": [8, 3, 3, 3], "b0": [8], "wg": [5, 72], "bg": [5]})


# name -> (model, whether the LRN reads the convolution's blocked result, whether a pooling
# reads the LRN, whether that pooling is unpadded: in the LRN's kernel where MERGES)
GRAPHS = {
    "lrn8_size5": lambda: (_lrn_between(8, 5), True, False, False),
    "lrn8_size3": lambda: (_lrn_between(8, 3), True, False, False),
    "lrn6_size5": lambda: (_lrn_between(6, 5), False, False, False),
    "lrn7_size3": lambda: (_lrn_between(7, 3), False, False, False),
    "max3x3s2": lambda: (_lrn_pool("MaxPool", 3, 2), True, True, True),
    "max2x2s2": lambda: (_lrn_pool("MaxPool", 2, 2), True, True, True),
    "average3x3s2": lambda: (_lrn_pool("AveragePool", 3, 2), True, True, True),
    "max3x3s2_6_channels": lambda: (_lrn_pool("MaxPool", 3, 2, channels=6), False, True, True),
    "max3x3s2_padded": lambda: (_lrn_pool("MaxPool", 3, 2, pads=1), True, True, False),
    "max3x3s2_ceil": lambda: (_lrn_pool("MaxPool", 3, 2, ceil=True), True, True, False),
    "average3x3s2_padded": lambda: (_lrn_pool("AveragePool", 3, 2, pads=1), True, True, False),
    "flatten": lambda: (_pool_flatten(), True, True, True),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return artifact_cache(tmp_path_factory.mktemp("lrn"), lambda name: GRAPHS[name]())


@pytest.mark.parametrize("target", DEVICES)
@pytest.mark.parametrize("name", GRAPHS)
def test_lrn_kernels(name, target, compiled):
    """Right against onnxruntime (and valid SPIR-V); no NCHW copy before a LRN of whole
    blocks (one before the others); an unpadded pooling after a LRN in the LRN's kernel
    on lavapipe, one dispatch; any other pooling a kernel of its own."""
    artifact, blocked, pooled, unpadded = compiled(name, target, "fp32", DEVICES[target])
    assert_matches_onnxruntime(artifact, seed=3)
    names = dispatched_kernels(artifact)
    (lrn,) = [i for i, kernel in enumerate(names) if "_lrn" in kernel]
    assert names[lrn - 1].startswith(COPY) != blocked, names
    assert ("pool" in names[lrn]) == (unpadded and MERGES[target]), names
    assert sum("pool" in kernel for kernel in names) == pooled, names
    if target == "vulkan":
        assert_spirv_valid(artifact)


@pytest.mark.parametrize("target", DEVICES)
def test_flattening_reads_the_blocked_pooling(target, compiled):
    """The pooling's kernel flattens its blocked result to NCHW's order: no copy kernel."""
    artifact, *_ = compiled("flatten", target, "fp32", DEVICES[target])
    names = dispatched_kernels(artifact)
    assert not any(kernel.startswith(COPY) for kernel in names), names


@pytest.mark.parametrize("target", DEVICES)
def test_fp16_storage(target, tmp_path):
    """The merged LRN and max-pooling in fp16 storage, checked by dnnf-run --check with
    its fp16 bound (``half_tolerance.py``)."""
    model, *_ = GRAPHS["max3x3s2"]()
    onnx.save(model, tmp_path / "m.onnx")
    report = compile_and_check(tmp_path / "m.onnx", tmp_path / "out", target, "dnnf", precision="fp16",
                               extra=("--device", DEVICES[target]))
    assert report.count("fp16 storage: rtol 8u") == 1, report
