"""``--gpu-layout nc4hw4`` (``dnnf-gpu-channel-blocks``) end to end on both GPU targets:
small graphs whose convolutions compute in NC4HW4, channel counts not multiples of 4
(3, 5, 6, 7: the padded channels must stay out of every result), a run of convolutions
with a residual add, a stride, max and average pooling, concatenations (blocked, and one
that splits a block, on NCHW copies), a batch normalization, a global pooling then a
Gemm, grouped convolutions, the end of an Inception block (concatenations of 2-4
branches of 4, 8, 12, 64 channels, nested, relus, then max or average pooling 3x3/1
padded or 3x3/2, an average pooling not counting its padding dividing by a constant per
pixel; 6 channels last, or inside: NCHW copies); the values copied to NCHW listed by
shape; run on the device found (lavapipe, PoCL) and compared with
onnxruntime within ``checking.compare``'s tolerance (|got - want| <= 3e-5 + 1e-4 *
|want| per element) on standard normal inputs; every SPIR-V binary passes spirv-val;
with --precision fp16 too, within dnnf-run's fp16 bound.
SqueezeNet in that layout on both targets, ResNet-50 too with DNNF_GPU_LAYOUT_MODELS=all
(about a minute on lavapipe), checked by dnnf-run --check as ``test_models`` does."""

import numpy as np
import onnx
import pytest
from gpu_artifacts import assert_matches_onnxruntime, assert_spirv_valid, dispatched_kernels
from onnx import TensorProto, helper, numpy_helper
from test_models import check_spirv_binaries, compile_and_check, opt_in

from dnnf_mlir.compiler import Artifact, CompileError, compile_model

TARGETS = ("vulkan", "opencl")
COPY = "kernel_nc4hw4_to_nchw_"


def _model(nodes, inputs: dict, outputs: dict, weights: dict):
    rng = np.random.default_rng(7)
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
                    for name, shape in weights.items()]
    initializers = [numpy_helper.from_array(np.abs(numpy_helper.to_array(t)) + 0.5, t.name) if t.name == "var" else t
                    for t in initializers]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in outputs.items()], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _chain():
    """3 -> 6 (3x3, bias, relu) -> 6 (1x1, bias, + the first's result, relu) -> 5 (3x3,
    stride 2); the first's result is also added after the second (a kernel of its own
    with the relu and a max-pooling, which reads both blocked): two NCHW copies (the
    graph's outputs)."""
    conv = helper.make_node
    return _model([
        conv("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]), conv("Relu", ["c0"], ["a"]),
        conv("Conv", ["a", "w1", "b1"], ["c1"]), conv("Add", ["c1", "a"], ["s"]), conv("Relu", ["s"], ["b"]),
        conv("Conv", ["b", "w2"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2]),
        conv("MaxPool", ["b"], ["z"], kernel_shape=[2, 2], strides=[2, 2])],
        {"x": [1, 3, 9, 9]}, {"y": [1, 5, 5, 5], "z": [1, 6, 4, 4]},
        {"w0": [6, 3, 3, 3], "b0": [6], "w1": [6, 6, 1, 1], "b1": [6], "w2": [5, 6, 3, 3]}), ["1x5x5x5", "1x6x4x4"]


def _fire():
    """SqueezeNet's fire module: a squeeze 1x1 convolution read by a 1x1 and a 3x3 one
    whose results are concatenated (5 + 7 channels), the 1x1 one in the concatenation's
    kernel: two NCHW copies (the squeezed values, the 3x3 convolution's result: 5
    channels, a partial block, cannot come first in a blocked concatenation)."""
    node = helper.make_node
    return _model([
        node("Conv", ["x", "ws", "bs"], ["s0"]), node("Relu", ["s0"], ["s"]),
        node("Conv", ["s", "we1", "be1"], ["e1"]), node("Conv", ["s", "we3", "be3"], ["e3"], pads=[1, 1, 1, 1]),
        node("Concat", ["e1", "e3"], ["c"], axis=1), node("Relu", ["c"], ["y"])],
        {"x": [1, 8, 7, 7]}, {"y": [1, 12, 7, 7]},
        {"ws": [6, 8, 1, 1], "bs": [6], "we1": [5, 6, 1, 1], "be1": [5], "we3": [7, 6, 3, 3], "be3": [7]}), [
        "1x6x7x7", "1x7x7x7"]


def _pools():
    """Max-pooling the graph's input (3 channels, padded with -inf: the channels past 3
    must stay zero, not -inf, for the next convolution's zero filters), a 3x3
    convolution to 6 channels, a padded max-pooling, one to 8, an average pooling and a
    relu: all in NC4HW4, one NCHW copy (the result)."""
    node = helper.make_node
    return _model([
        node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        node("Conv", ["p", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]), node("Relu", ["c0"], ["a"]),
        node("MaxPool", ["a"], ["m"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("Conv", ["m", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        node("AveragePool", ["c1"], ["v"], kernel_shape=[2, 2], strides=[2, 2]), node("Relu", ["v"], ["y"])],
        {"x": [1, 3, 10, 10]}, {"y": [1, 8, 2, 2]},
        {"w0": [6, 3, 3, 3], "b0": [6], "w1": [8, 6, 3, 3]}), ["1x8x2x2"]


def _concatenation():
    """Three branches concatenated along channels, 8 + 4 + 6 (the last a partial block,
    which a blocked concatenation takes), a batch normalization (not folded into a
    convolution: DenseNet's; its division by sqrt(var + eps) per channel), a relu and a
    3x3 convolution: one NCHW copy (the result)."""
    node = helper.make_node
    return _model([
        node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1]), node("Conv", ["x", "wb", "bb"], ["b"]),
        node("Conv", ["x", "wc"], ["c"], pads=[1, 1, 1, 1]),
        node("Concat", ["a", "b", "c"], ["k"], axis=1),
        node("BatchNormalization", ["k", "scale", "shift", "mean", "var"], ["n"]), node("Relu", ["n"], ["r"]),
        node("Conv", ["r", "wy"], ["y"], pads=[1, 1, 1, 1])],
        {"x": [1, 5, 6, 6]}, {"y": [1, 7, 6, 6]},
        {"wa": [8, 5, 3, 3], "wb": [4, 5, 1, 1], "bb": [4], "wc": [6, 5, 3, 3], "wy": [7, 18, 3, 3], "scale": [18],
         "shift": [18], "mean": [18], "var": [18]}), ["1x7x6x6"]


def _global_pooling():
    """A 3x3 convolution to 10 channels, a residual add of a 1x1 one, a relu, global
    average pooling, flattening and a Gemm: the pooling's kernel flattens the blocked
    [1, 10, 1, 1] itself, no NCHW copy."""
    node = helper.make_node
    return _model([
        node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]), node("Conv", ["x", "w1"], ["c1"]),
        node("Add", ["c0", "c1"], ["s"]), node("Relu", ["s"], ["r"]),
        node("GlobalAveragePool", ["r"], ["g"]), node("Flatten", ["g"], ["f"]),
        node("Gemm", ["f", "wg", "bg"], ["y"], transB=1)],
        {"x": [1, 5, 6, 7]}, {"y": [1, 3]},
        {"w0": [10, 5, 3, 3], "b0": [10], "w1": [10, 5, 1, 1], "wg": [3, 10], "bg": [3]}), []


def _groups():
    """A 3x3 convolution to 8 channels, relu, a grouped 3x3 one (2 groups of 4 channels:
    blocked, each output block over its group's input block), relu, a 3x3 one, and a
    grouped one to 2 groups of 3 output channels (not whole blocks: NCHW, on a copy): one
    NCHW copy (two with the grouped convolutions NCHW)."""
    node = helper.make_node
    return _model([
        node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]), node("Relu", ["c0"], ["a"]),
        node("Conv", ["a", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], group=2), node("Relu", ["c1"], ["b"]),
        node("Conv", ["b", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        node("Conv", ["c2", "w3"], ["y"], pads=[1, 1, 1, 1], group=2)],
        {"x": [1, 5, 7, 7]}, {"y": [1, 6, 7, 7]},
        {"w0": [8, 5, 3, 3], "b0": [8], "w1": [8, 4, 3, 3], "b1": [8], "w2": [8, 8, 3, 3], "w3": [6, 4, 3, 3]}), [
        "1x8x7x7"]


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


GRAPHS = {"chain": _chain, "fire": _fire, "pools": _pools, "concatenation": _concatenation,
          "global_pooling": _global_pooling, "groups": _groups, "inception_end": _inception_end,
          "nested_max_pool": _nested_max_pool, "four_branches": _four_branches,
          "partial_block_inside": _partial_block_inside}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    directory, cache = tmp_path_factory.mktemp("nc4hw4"), {}

    def get(name, target):
        if (name, target) not in cache:
            model, copies = GRAPHS[name]()
            path = directory / f"{name}.onnx"
            onnx.save(model, path)
            compile_model(path, directory / f"{name}-{target}", target=target, gpu_layout="nc4hw4")
            cache[name, target] = Artifact(directory / f"{name}-{target}"), copies
        return cache[name, target]

    return get


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", GRAPHS)
def test_matches_onnxruntime(name, target, compiled):
    artifact, _ = compiled(name, target)
    assert_matches_onnxruntime(artifact, seed=5)
    if target == "vulkan":
        assert_spirv_valid(artifact)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", GRAPHS)
def test_nchw_copies_only_where_others_read(name, target, compiled):
    """The shapes of the values copied back to NCHW, one copy kernel each."""
    artifact, copied = compiled(name, target)
    names = dispatched_kernels(artifact)
    # A copy to a channel count not a multiple of 4 is two dispatches (its slice a second).
    shapes = [kernel[len(COPY):-len("_kernel")] for kernel in names
              if kernel.startswith(COPY) and kernel.endswith("_kernel")]
    assert sorted(shapes) == copied, names


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["chain", "pools", "global_pooling", "inception_end", "four_branches"])
def test_fp16_storage(name, target, tmp_path):
    """fp16 storage (run after the blocking) keeps the blocked values in half, through
    the poolings and the global pooling too: checked by dnnf-run --check with its fp16
    bound (``half_tolerance.py``), every output."""
    model, _ = GRAPHS[name]()
    onnx.save(model, tmp_path / f"{name}.onnx")
    report = compile_and_check(tmp_path / f"{name}.onnx", tmp_path / "out", target, "dnnf", precision="fp16",
                               extra=("--gpu-layout", "nc4hw4"))
    assert report.count("fp16 storage: rtol 8u") == len(model.graph.output), report


@pytest.mark.parametrize("target, device, blocked", [("opencl", "pocl", True), ("opencl", None, False),
                                                     ("vulkan", "lavapipe", True), ("vulkan", None, False)])
def test_auto_layout_is_the_device_profiles(target, device, blocked, tmp_path):
    """``--gpu-layout auto`` (the default) blocks on the profiles where it measured faster
    only (``GpuDevice.channel_blocks``: OpenCL's ``pocl``, Vulkan's ``lavapipe``): the
    fire module's NCHW copies are there or not."""
    model, copies = _fire()
    onnx.save(model, tmp_path / "fire.onnx")
    compile_model(tmp_path / "fire.onnx", tmp_path / "out", target=target, device=device)
    names = dispatched_kernels(Artifact(tmp_path / "out"))
    assert sum(kernel.startswith(COPY) and kernel.endswith("_kernel") for kernel in names) == (
        len(copies) if blocked else 0)


def test_cpu_targets_refuse_the_layout(tmp_path):
    model, _ = _fire()
    onnx.save(model, tmp_path / "fire.onnx")
    with pytest.raises(CompileError, match="--gpu-layout nc4hw4 is for the GPU targets"):
        compile_model(tmp_path / "fire.onnx", tmp_path / "out", target="host", gpu_layout="nc4hw4")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", opt_in(["squeezenet", "resnet50"], ("squeezenet",), "DNNF_GPU_LAYOUT_MODELS",
                                        "slow on lavapipe"))
def test_model(name, target, checked_models, tmp_path):
    outdir = tmp_path / name
    compile_and_check(checked_models(name), outdir, target, "dnnf", extra=("--gpu-layout", "nc4hw4"))
    if target == "vulkan":
        check_spirv_binaries(outdir)
