"""The Vulkan target end to end: small ONNX graphs, one per kind of kernel the GPU
schedules (element-wise chains, contractions with their epilogues, convolutions,
windows, row reductions, data movement, an attention block), compiled with
``compile_model(target="vulkan")``, run in this process on the Vulkan device the runtime
finds (lavapipe here) and compared with onnxruntime (``checking.compare``: |got - want|
<= 3e-5 + 1e-4 * |want| per element) on random inputs; every SPIR-V binary passes
``spirv-val``. Then the artifact's runner, the per-dispatch GPU times, and the errors:
no Vulkan device, options the target does not take, a device profile the code cannot
keep within.
"""

import json
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import CodegenError, get_target, lower
from dnnf_mlir.codegen.gpu.vulkan import VulkanDevice, VulkanTarget
from dnnf_mlir.compiler import Artifact, ArtifactError, compile_model
from gpu_artifacts import assert_matches_onnxruntime

OPSET = 17


def _model(nodes, inputs: dict, outputs: dict, weights: dict | None = None) -> onnx.ModelProto:
    """A model of ``nodes``: ``inputs`` / ``outputs`` name -> shape (float32), ``weights``
    name -> array (initializers)."""
    def value(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    rng = np.random.default_rng(7)
    initializers = [numpy_helper.from_array(array if isinstance(array, np.ndarray) else
                                            (rng.standard_normal(array) * 0.2).astype(np.float32), name)
                    for name, array in (weights or {}).items()]
    graph = helper.make_graph(nodes, "g", [value(n, s) for n, s in inputs.items()],
                              [value(n, s) for n, s in outputs.items()], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _attention():
    """Scores, a masked softmax and the probabilities' product: one head per batch row."""
    nodes = [
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    return _model(nodes, {"q": [2, 4, 64, 32], "kt": [2, 4, 32, 64], "v": [2, 4, 64, 32]}, {"y": [2, 4, 64, 32]},
                  {"scale": np.array(0.17, np.float32), "mask": np.where(np.tri(64) > 0, 0, -1e4).astype(np.float32)})


def _boolean_gather():
    """LLaMA's mask: booleans from token ids, gathered (bytes packed in the kernels' words;
    50 outputs: a buffer rounded up past the caller's 200 bytes)."""
    indices = np.random.default_rng(5).integers(0, 50, (1, 1, 1, 50)).astype(np.int64)
    nodes = [helper.make_node("Cast", ["ids"], ["b"], to=TensorProto.BOOL),
             helper.make_node("Reshape", ["b", "shape"], ["r"]),
             helper.make_node("Gather", ["r", "indices"], ["g"], axis=0),
             helper.make_node("Cast", ["g"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 50])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 50, 1])],
                              [numpy_helper.from_array(np.array([50, 1], np.int64), "shape"),
                               numpy_helper.from_array(indices, "indices")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


GRAPHS = {
    "elementwise": lambda: _model(
        [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Sigmoid", ["s"], ["g"]),
         helper.make_node("Mul", ["s", "g"], ["silu"]), helper.make_node("Erf", ["silu"], ["e"]),
         helper.make_node("Tanh", ["e"], ["y"])],
        {"x": [3, 50, 64]}, {"y": [3, 50, 64]}, {"b": [64]}),
    "matmul_bias_relu": lambda: _model(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
         helper.make_node("Relu", ["a"], ["y"])],
        {"x": [96, 200]}, {"y": [96, 120]}, {"w": [200, 120], "b": [120]}),
    "batch_matmul": lambda: _model([helper.make_node("MatMul", ["a", "b"], ["y"])],
                                   {"a": [6, 40, 24], "b": [6, 24, 36]}, {"y": [6, 40, 36]}),
    "conv_bn_relu": lambda: _model(
        [helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"]),
         helper.make_node("Relu", ["n"], ["y"])],
        {"x": [1, 16, 30, 30]}, {"y": [1, 32, 15, 15]},
        {"w": [32, 16, 3, 3], "cb": [32], "g": [32], "be": [32], "mu": [32],
         "var": np.full(32, 1.5, np.float32)}),
    "pointwise_conv": lambda: _model([helper.make_node("Conv", ["x", "w"], ["y"])],
                                     {"x": [1, 32, 14, 14]}, {"y": [1, 48, 14, 14]}, {"w": [48, 32, 1, 1]}),
    "depthwise_conv": lambda: _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], group=24, pads=[1, 1, 1, 1])],
        {"x": [1, 24, 20, 20]}, {"y": [1, 24, 20, 20]}, {"w": [24, 1, 3, 3]}),
    "grouped_conv": lambda: _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], group=4, pads=[1, 1, 1, 1])],
        {"x": [1, 32, 12, 12]}, {"y": [1, 32, 12, 12]}, {"w": [32, 8, 3, 3]}),
    "pools": lambda: _model(
        [helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["a"], ["y"])],
        {"x": [1, 8, 33, 33]}, {"y": [1, 8, 1, 1]}),
    "softmax": lambda: _model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
                              {"x": [12, 77, 100]}, {"y": [12, 77, 100]}),
    "layer_norm": lambda: _model(
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
        {"x": [2, 50, 96]}, {"y": [2, 50, 96]}, {"g": [96], "b": [96]}),
    "reductions": lambda: _model(
        [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=0),
         helper.make_node("ReduceMax", ["x"], ["x_max"], axes=[2], keepdims=0)],
        {"x": [6, 70, 40]}, {"m": [6, 40], "x_max": [6, 70]}),
    "data_movement": lambda: _model(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
         helper.make_node("Concat", ["t", "z"], ["c"], axis=2),
         helper.make_node("Reshape", ["c", "shape"], ["r"]),
         helper.make_node("Slice", ["r", "starts", "ends", "axes"], ["y"])],
        {"x": [2, 6, 20], "z": [2, 20, 10]}, {"y": [2, 20, 15]},
        {"shape": np.array([2, 20, 16], np.int64), "starts": np.array([1], np.int64),
         "ends": np.array([16], np.int64), "axes": np.array([2], np.int64)}),
    "attention": _attention,
    "boolean_gather": _boolean_gather,
    # MobileNetV2's stem: a padded result, the clipped convolution computed in its
    # interior, its border filled, in one dispatch.
    "conv_clip_pad": lambda: _model(
        [helper.make_node("Conv", ["x", "w", "cb"], ["c"], strides=[2, 2]),
         helper.make_node("Clip", ["c", "lo", "hi"], ["r"]),
         helper.make_node("Pad", ["r", "pads"], ["y"])],
        {"x": [1, 3, 33, 33]}, {"y": [1, 16, 18, 18]},
        {"w": [16, 3, 3, 3], "cb": [16], "lo": np.array(0, np.float32), "hi": np.array(6, np.float32),
         "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)}),
    # A padding read by an op of the kernel: it gathers from the product.
    "matmul_pad_sigmoid": lambda: _model(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Pad", ["m", "pads"], ["p"]),
         helper.make_node("Sigmoid", ["p"], ["y"])],
        {"x": [32, 16]}, {"y": [34, 18]}, {"w": [16, 16], "pads": np.array([1, 1, 1, 1], np.int64)}),
    # A DenseNet layer: the new features after the old ones, the concatenation returned
    # and normalized for the next layer.
    "dense_layer": lambda: _model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Concat", ["old", "c"], ["features"], axis=1),
         helper.make_node("BatchNormalization", ["features", "g", "be", "mu", "var"], ["n"]),
         helper.make_node("Relu", ["n"], ["y"])],
        {"x": [1, 16, 12, 12], "old": [1, 24, 12, 12]}, {"features": [1, 32, 12, 12], "y": [1, 32, 12, 12]},
        {"w": [8, 16, 3, 3], "g": [32], "be": [32], "mu": [32], "var": np.full(32, 1.5, np.float32)}),
    # An Inception block's end: branches concatenated in two steps, activated, and the
    # next block's max pool over the concatenation.
    "inception_concat_pool": lambda: _model(
        [helper.make_node("Relu", ["a"], ["ra"]), helper.make_node("Relu", ["b"], ["rb"]),
         helper.make_node("Concat", ["ra", "rb"], ["ab"], axis=1),
         helper.make_node("Concat", ["ab", "c"], ["abc"], axis=1),
         helper.make_node("Relu", ["abc"], ["y"]),
         helper.make_node("MaxPool", ["y"], ["pooled"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        {"a": [1, 8, 9, 9], "b": [1, 16, 9, 9], "c": [1, 4, 9, 9]},
        {"y": [1, 28, 9, 9], "pooled": [1, 28, 9, 9]}),
    # A ShuffleNet unit: a grouped convolution's channels shuffled, concatenated with a shortcut.
    "channel_shuffle": lambda: _model(
        [helper.make_node("Conv", ["x", "w"], ["c"], group=4),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Reshape", ["r", "split"], ["s"]),
         helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 1, 3, 4]),
         helper.make_node("Reshape", ["t", "merged"], ["shuffled"]),
         helper.make_node("Concat", ["shuffled", "shortcut"], ["y"], axis=1)],
        {"x": [1, 16, 10, 10], "shortcut": [1, 8, 10, 10]}, {"y": [1, 32, 10, 10]},
        {"w": [24, 4, 1, 1], "split": np.array([1, 4, 6, 10, 10], np.int64),
         "merged": np.array([1, 24, 10, 10], np.int64)}),
    # A UNet's up-sampling: each of the 2x2 stride-2 transposed convolution's four phases
    # a one-tap convolution (its window dims read by the input alone and a slice of the
    # weights), interleaved, the skip concatenated.
    "unet_up": lambda: _model(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["u"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Concat", ["u", "skip"], ["y"], axis=1)],
        {"x": [1, 16, 7, 9], "skip": [1, 8, 14, 18]}, {"y": [1, 16, 14, 18]}, {"w": [16, 8, 2, 2], "b": [8]}),
    # A product plus its transpose: each thread computes its tile of the product and the
    # tile transposed, whose register rows its epilogue reads down the columns (a read of
    # the column starting where a written row starts was forwarded that row: wrong on
    # both GPU targets, codegen/gpu/forwarding.py).
    "matmul_plus_transpose": lambda: _model(
        [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Transpose", ["m"], ["t"], perm=[1, 0]),
         helper.make_node("Add", ["m", "t"], ["y"])],
        {"a": [36, 20], "b": [20, 36]}, {"y": [36, 36]}),
}


def graphs_compiled_for(target: str, directory, precision: str = "fp32"):
    """name -> the Artifact of GRAPHS[name] compiled for ``target`` (in ``precision``) in
    ``directory``, once."""
    cache = {}

    def get(name):
        if name not in cache:
            path = directory / f"{name}.onnx"
            onnx.save(GRAPHS[name](), str(path))
            compile_model(path, directory / name, target=target, precision=precision)
            cache[name] = Artifact(directory / name)
        return cache[name]

    return get


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """name -> the Artifact of GRAPHS[name], compiled for Vulkan once per module."""
    return graphs_compiled_for("vulkan", tmp_path_factory.mktemp("vulkan"))


@pytest.mark.parametrize("name", GRAPHS)
def test_matches_onnxruntime(name, compiled):
    assert_matches_onnxruntime(compiled(name), seed=3)


@pytest.mark.parametrize("name", GRAPHS)
def test_every_binary_passes_spirv_val(name, compiled):
    artifact = compiled(name)
    binaries = sorted((artifact.path / "kernels").glob("*.spv"))
    assert len(binaries) == artifact.manifest["spirv_kernels"] > 0
    for binary in binaries:
        check = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", str(binary)], capture_output=True, text=True)
        assert check.returncode == 0, f"{binary.name}: {check.stdout}{check.stderr}"


def test_one_dispatch_per_kernel(compiled):
    """A fused kernel is one dispatch: as many dispatches per run as the CPU path's kernels."""
    manifest = compiled("matmul_bias_relu").manifest
    assert manifest["dispatches"] == manifest["kernels"] == 1
    manifest = compiled("conv_bn_relu").manifest
    assert manifest["dispatches"] == manifest["kernels"] == 1


@pytest.mark.parametrize("name", ["conv_clip_pad", "dense_layer", "inception_concat_pool", "channel_shuffle"])
def test_pieces_of_a_result_are_one_dispatch(name, compiled):
    """Concatenated and padded results, computed piece by piece in place (each piece a
    group of the one launch), are one dispatch per kernel, as on the CPU."""
    manifest = compiled(name).manifest
    assert manifest["dispatches"] == manifest["kernels"]


def test_a_gather_from_a_computed_value_is_a_dispatch_later(compiled):
    """A padding of the kernel's own product, read by another op of the kernel, is not
    fused into each thread that reads it (every thread would compute the whole
    product): the product is one dispatch, the padding's reader the next."""
    manifest = compiled("matmul_pad_sigmoid").manifest
    assert manifest["kernels"] == 1 and manifest["dispatches"] == 2


def test_dispatch_times_and_device(compiled):
    artifact = compiled("conv_bn_relu")
    session = artifact.session()
    session.run_timed([np.ones((1, 16, 30, 30), np.float32)], 1)
    ((kernel, milliseconds),) = session.dispatch_times()  # one fused kernel
    assert kernel.startswith("kernel_") and milliseconds > 0
    assert session.device  # the device's name, as the runtime reports it


def test_runner_agrees_with_library(compiled, tmp_path):
    artifact = compiled("softmax")
    x = np.random.default_rng(5).standard_normal((12, 77, 100)).astype(np.float32)
    outputs, _ = artifact.run([x])
    x.tofile(tmp_path / "x.bin")
    subprocess.run([artifact.path / "dnnf_runner", artifact.path / "weights.bin", tmp_path / "x.bin",
                    tmp_path / "y.bin"], check=True)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.bin", np.float32).reshape(12, 77, 100), outputs[0])


def test_no_vulkan_loader_says_what_to_install(compiled, monkeypatch):
    monkeypatch.setenv("DNNF_VULKAN_LOADER", "/nonexistent/libvulkan.so.1")
    with pytest.raises(ArtifactError, match=r"install the Vulkan loader \(Debian: libvulkan1\)"):
        compiled("softmax").session()


def test_dnnf_run_without_a_device_prints_one_line(compiled):
    path = compiled("softmax").path
    done = subprocess.run(["dnnf-run", str(path)], capture_output=True, text=True,
                          env={**os.environ, "VK_ICD_FILENAMES": "/dev/null"})
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "install a Vulkan driver" in done.stderr, done.stderr


def test_options_the_target_does_not_take():
    with pytest.raises(ValueError, match="target 'vulkan' takes no option cpu"):
        get_target("vulkan", cpu="znver3")
    with pytest.raises(ValueError, match="unknown Vulkan device profile 'adreno9000'; known: generic"):
        get_target("vulkan", device="adreno9000")


ADD = """
func.func private @kernel_0(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32>
    attributes {dnnf.kernel} {
  %s = linalg.add ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}
func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = call @kernel_0(%a, %b, %c) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
"""


def test_a_kernel_over_the_devices_bindings_is_an_error():
    """A device profile allowing two bindings per dispatch: the kernel binds three."""
    narrow = VulkanTarget("vulkan", VulkanDevice("narrow", max_storage_buffer_range=1 << 27, max_storage_buffers=2,
                                                 max_workgroup_invocations=128, max_shared_memory=16 << 10))
    with ir.Context():
        module = ir.Module.parse(ADD)
        with pytest.raises(CodegenError, match="kernel_0 would bind 3 buffers in one launch; the device allows 2"):
            lower(module, narrow)


FLAT_GATHER = """
func.func private @kernel_0(%table: tensor<64x16xf32>, %ids: tensor<4xi32>, %out: tensor<4x16xf32>) -> tensor<4x16xf32>
    attributes {dnnf.kernel} {
  %flat = tensor.collapse_shape %table [[0, 1]] : tensor<64x16xf32> into tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi32>) outs(%out : tensor<4x16xf32>) {
  ^bb0(%id: i32, %o: f32):
    %j = linalg.index 1 : index
    %row = arith.index_cast %id : i32 to index
    %c16 = arith.constant 16 : index
    %base = arith.muli %row, %c16 : index
    %k = arith.addi %base, %j : index
    %v = tensor.extract %flat[%k] : tensor<1024xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
func.func @main(%table: tensor<64x16xf32>, %ids: tensor<4xi32>, %out: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = call @kernel_0(%table, %ids, %out) : (tensor<64x16xf32>, tensor<4xi32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
"""


def test_a_flat_gather_of_a_table_over_one_binding_reads_it_in_chunks():
    """An embedding gathered through its 1-d view (``flat_reads.py``), 4,096 bytes on a
    device binding at most 1,024: read in four chunks of 16 rows, not refused (GPT-2's
    154 MB token embedding on a 128 MiB binding)."""
    narrow = VulkanTarget("vulkan", VulkanDevice("narrow", max_storage_buffer_range=1024, max_storage_buffers=24,
                                                 max_workgroup_invocations=128, max_shared_memory=16 << 10))
    with ir.Context():
        module = ir.Module.parse(FLAT_GATHER)
        lower(module, narrow)


def test_manifest_describes_the_vulkan_code(compiled):
    manifest = json.loads((compiled("attention").path / "manifest.json").read_text())
    assert manifest["target"] == "vulkan" and manifest["device"] == "generic"
    assert manifest["spirv_bytes"] == sum(p.stat().st_size for p in (compiled("attention").path / "kernels").iterdir())
    assert manifest["emulator"] is None and manifest["dispatches"] >= manifest["kernels"] >= 1
