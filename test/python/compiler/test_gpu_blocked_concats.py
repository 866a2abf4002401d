"""The end of an Inception block in NC4HW4 on both GPU targets (the ``pocl`` and
``lavapipe`` profiles, which block): concatenations of 2-4 branches (4, 8, 12, 64
channels; nested), relus before and after, then max or average pooling (3x3/1 padded,
3x3/2; an average pooling that does not count its padding divides by a constant per
pixel, ``blocked_kernels._operand_kind``'s ``pixel``), with an input of 6 channels
mixed in (last: blocked; in the middle: the kernel stays NCHW, on copies). Each graph
is run on the device found (lavapipe, PoCL) and compared with onnxruntime within
``checking.compare``'s tolerance (|got - want| <= 3e-5 + 1e-4 * |want| per element) on
standard normal inputs, its NCHW copy kernels counted; every SPIR-V binary passes
spirv-val; in fp16 too, within dnnf-run's fp16 bound."""

import numpy as np
import onnx
import pytest
from gpu_artifacts import artifact_cache, assert_matches_onnxruntime, assert_spirv_valid
from onnx import TensorProto, helper, numpy_helper
from test_models import compile_and_check

DEVICES = {"vulkan": "lavapipe", "opencl": "pocl"}
COPY = "kernel_nc4hw4_to_nchw_"


def _model(nodes, inputs: dict, outputs: dict, weights: dict):
    rng = np.random.default_rng(11)
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
                    for name, shape in weights.items()]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in outputs.items()], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _branches(channels: list, node=helper.make_node) -> tuple[list, dict]:
    """A chain of 3x3 convolutions (bias, relu) from ``x`` (5 channels), one per entry of
    ``channels`` (a chain: branches of one input would merge into one convolution and
    its slices); the nodes, their weights; convolution i's result is ``r{i}``."""
    nodes, weights, source, inputs = [], {}, "x", 5
    for i, c in enumerate(channels):
        nodes += [node("Conv", [source, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  node("Relu", [f"c{i}"], [f"r{i}"])]
        weights.update({f"w{i}": [c, inputs, 3, 3], f"b{i}": [c]})
        source, inputs = f"r{i}", c
    return nodes, weights


def _inception_end():
    """8 + 4 + 12 channels concatenated (the last one's relu after the others', in the
    concatenation's kernel as Inception v2's), returned, and average-pooled 3x3/1 padded
    by 1 without counting the padding: all blocked, the NCHW copies the outputs'."""
    node = helper.make_node
    nodes, weights = _branches([8, 4, 12])
    nodes += [node("Concat", ["r0", "r1", "r2"], ["k"], axis=1),
              node("AveragePool", ["k"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0)]
    return _model(nodes, {"x": [1, 5, 9, 9]}, {"k": [1, 24, 9, 9], "y": [1, 24, 9, 9]}, weights), ["1x24x9x9"] * 2


def _nested_max_pool():
    """(64 + 4) + 8 channels concatenated in two steps, max-pooled 3x3/2 unpadded, a relu,
    then a 3x3 convolution: one NCHW copy (the output's)."""
    node = helper.make_node
    nodes, weights = _branches([64, 4, 8])
    nodes += [node("Concat", ["r0", "r1"], ["k0"], axis=1), node("Concat", ["k0", "r2"], ["k"], axis=1),
              node("MaxPool", ["k"], ["m"], kernel_shape=[3, 3], strides=[2, 2]), node("Relu", ["m"], ["a"]),
              node("Conv", ["a", "wy"], ["y"], pads=[1, 1, 1, 1])]
    weights["wy"] = [8, 76, 3, 3]
    return _model(nodes, {"x": [1, 5, 9, 9]}, {"y": [1, 8, 4, 4]}, weights), ["1x8x4x4"]


def _four_branches():
    """4 + 8 + 12 + 6 channels (a partial block last), a 3x3/2 average pooling padded by 1
    counting the padding and one not counting it, each then a relu: blocked, the lanes
    past 30 divided by the same per-pixel counts as the pixel's channels; the NCHW copies
    the outputs'."""
    node = helper.make_node
    nodes, weights = _branches([4, 8, 12, 6])
    nodes += [node("Concat", ["r0", "r1", "r2", "r3"], ["k"], axis=1),
              node("AveragePool", ["k"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                   count_include_pad=1),
              node("AveragePool", ["k"], ["q"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
              node("Relu", ["p"], ["y"]), node("Relu", ["q"], ["z"])]
    return _model(nodes, {"x": [1, 5, 9, 9]}, {"y": [1, 30, 5, 5], "z": [1, 30, 5, 5]}, weights), ["1x30x5x5"] * 2


def _partial_block_inside():
    """8 + 6 + 4 channels: the 6 in the middle would shift the channels after it within
    their blocks, so the concatenation's kernel (with a padded max pooling 3x3/1) stays
    NCHW and reads NCHW copies of the three branches; its result is NCHW already."""
    node = helper.make_node
    nodes, weights = _branches([8, 6, 4])
    nodes += [node("Concat", ["r0", "r1", "r2"], ["k"], axis=1),
              node("MaxPool", ["k"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    return _model(nodes, {"x": [1, 5, 9, 9]}, {"y": [1, 18, 9, 9]}, weights), ["1x4x9x9", "1x6x9x9", "1x8x9x9"]


GRAPHS = {"inception_end": _inception_end, "nested_max_pool": _nested_max_pool, "four_branches": _four_branches,
          "partial_block_inside": _partial_block_inside}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return artifact_cache(tmp_path_factory.mktemp("blocked_concats"), lambda name: GRAPHS[name]())


@pytest.mark.parametrize("target", DEVICES)
@pytest.mark.parametrize("name", GRAPHS)
def test_matches_onnxruntime(name, target, compiled):
    artifact, _ = compiled(name, target, "fp32", DEVICES[target])
    assert_matches_onnxruntime(artifact, seed=3)
    if target == "vulkan":
        assert_spirv_valid(artifact)


@pytest.mark.parametrize("target", DEVICES)
@pytest.mark.parametrize("name", GRAPHS)
def test_nchw_copies_only_where_needed(name, target, compiled):
    """The shapes of the values copied back to NCHW: the graph's outputs only, but where
    a partial block sits inside a concatenation."""
    artifact, copied = compiled(name, target, "fp32", DEVICES[target])
    session = artifact.session()
    session.run([np.zeros(shape, dtype) for _, dtype, shape in artifact.inputs])
    names = [kernel for kernel, _ in session.dispatch_times()]
    # A copy to a channel count not a multiple of 4 is two dispatches (its slice a second).
    shapes = [kernel[len(COPY):-len("_kernel")] for kernel in names
              if kernel.startswith(COPY) and kernel.endswith("_kernel")]
    assert sorted(shapes) == copied, names


@pytest.mark.parametrize("target", DEVICES)
@pytest.mark.parametrize("name", ["inception_end", "four_branches"])
def test_fp16_storage(name, target, tmp_path):
    """In fp16 storage: checked by dnnf-run --check with its fp16 bound, every output."""
    model, _ = GRAPHS[name]()
    onnx.save(model, tmp_path / f"{name}.onnx")
    report = compile_and_check(tmp_path / f"{name}.onnx", tmp_path / "out", target, "dnnf", precision="fp16",
                               extra=("--device", DEVICES[target]))
    assert report.count("fp16 storage: rtol 8u") == len(model.graph.output), report
