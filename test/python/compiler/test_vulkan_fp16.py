"""``--precision fp16`` on the Vulkan target: a CNN block and a transformer block
compiled with ``compile_model(target="vulkan", precision="fp16")``, run on the Vulkan
device found (lavapipe here) and compared with onnxruntime in fp32.

The tolerance is ``half_tolerance`` (``dnnf_mlir/half_tolerance.py``: rtol 8u, atol
4u sqrt(K) RMS(want), u = 2^-11, K the longest accumulation), and
``test_fp16_is_really_half`` checks that the error is above what fp32 storage gives.
The judged models (SqueezeNet in every run, the others with DNNF_VULKAN_MODELS=all) are
held to the same bound, K their longest weight dot product (a convolution's C/g * kh * kw,
a MatMul's or Gemm's inner dimension): their normalizations (batch norms folded into the
convolutions, layer norms, softmaxes) keep the error carried from layer to layer at the
scale of one layer's (measured: SqueezeNet's probabilities at 0.55 of the bound, its
logits 0.05, DistilBERT's hidden states 0.05).
"""

import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.checking import compare, make_inputs
from dnnf_mlir.ecg import TensorSpec
from dnnf_mlir.compiler import Artifact, ArtifactError, compile_model
from dnnf_mlir.half_tolerance import HALF_EPSILON, half_tolerance, longest_accumulation
from dnnf_mlir.tools.common import onnxruntime_session
from gen_models import MODEL_NAMES
from test_models import opt_in

OPSET = 17


def _model(nodes, inputs: dict, outputs: dict, weights: dict) -> onnx.ModelProto:
    rng = np.random.default_rng(11)
    initializers = [numpy_helper.from_array(value if isinstance(value, np.ndarray) else
                                            (rng.standard_normal(value) * 0.2).astype(np.float32), name)
                    for name, value in weights.items()]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def cnn_block():
    """Convolution, batch norm, ReLU, a second convolution, a residual add, a global
    average pool: K = 16 * 3 * 3 = 144 products per output, then a mean of 256."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g", "beta", "mean", "var"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["y"]),
    ]
    rng = np.random.default_rng(12)
    weights = {"w1": [16, 16, 3, 3], "b1": [16], "w2": [16, 16, 3, 3],
               "g": (1 + 0.1 * rng.standard_normal(16)).astype(np.float32), "beta": [16],
               "mean": [16], "var": (1 + rng.random(16)).astype(np.float32)}
    return _model(nodes, {"x": [1, 16, 16, 16]}, {"y": [1, 16], "r1": [1, 16, 16, 16]}, weights), 144


def transformer_block():
    """A pre-norm encoder layer: layer norm, Q K V projections, scaled scores, softmax,
    the heads' product, the output projection and residual, then a GELU MLP: K = 256
    (the MLP's second projection) is the longest accumulation."""
    d, heads, seq, hidden = 64, 4, 32, 256
    dh = d // heads
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["h"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["h", "wq"], ["q0"]), helper.make_node("MatMul", ["h", "wk"], ["k0"]),
        helper.make_node("MatMul", ["h", "wv"], ["v0"]),
        helper.make_node("Reshape", ["q0", "split"], ["q1"]), helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["k0", "split"], ["k1"]), helper.make_node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["v0", "split"], ["v1"]), helper.make_node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]), helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["a0"]), helper.make_node("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["a1", "merge"], ["a"]),
        helper.make_node("MatMul", ["a", "wo"], ["o"]), helper.make_node("Add", ["o", "x"], ["r"]),
        helper.make_node("MatMul", ["r", "w1"], ["m0"]), helper.make_node("Add", ["m0", "b1"], ["m1"]),
        helper.make_node("Mul", ["m1", "rsqrt2"], ["g0"]), helper.make_node("Erf", ["g0"], ["g1"]),
        helper.make_node("Add", ["g1", "one"], ["g2"]), helper.make_node("Mul", ["m1", "g2"], ["g3"]),
        helper.make_node("Mul", ["g3", "half"], ["m2"]),
        helper.make_node("MatMul", ["m2", "w2"], ["m3"]), helper.make_node("Add", ["m3", "r"], ["y"]),
    ]
    weights = {"ln_g": np.ones(d, np.float32), "ln_b": [d], "wq": [d, d], "wk": [d, d], "wv": [d, d],
               "wo": [d, d], "w1": [d, hidden], "b1": [hidden], "w2": [hidden, d],
               "split": np.array([1, seq, heads, dh], np.int64), "merge": np.array([1, seq, d], np.int64),
               "scale": np.array(dh ** -0.5, np.float32), "rsqrt2": np.array(0.5 ** 0.5, np.float32),
               "one": np.array(1, np.float32), "half": np.array(0.5, np.float32)}
    return _model(nodes, {"x": [1, seq, d]}, {"y": [1, seq, d], "p": [1, heads, seq, seq]}, weights), hidden


BLOCKS = {"cnn": cnn_block, "transformer": transformer_block}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fp16")
    cache = {}

    def get(name):
        if name not in cache:
            model, accumulation = BLOCKS[name]()
            path = directory / f"{name}.onnx"
            onnx.save(model, path)
            compile_model(path, directory / name, target="vulkan", precision="fp16")
            cache[name] = Artifact(directory / name), accumulation
        return cache[name]

    return get


def _run(artifact):
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(shape).astype(dtype) for _, dtype, shape in artifact.inputs]
    got, _ = artifact.run(inputs)
    want = onnxruntime_session(artifact.manifest["model"]).run(
        None, {name: array for (name, _, _), array in zip(artifact.inputs, inputs)})
    return got, want


@pytest.mark.parametrize("name", BLOCKS)
def test_fp16_matches_onnxruntime_fp32(name, compiled):
    artifact, accumulation = compiled(name)
    for got, want, (output, _, _) in zip(*_run(artifact), artifact.outputs):
        assert got.dtype == np.float32  # the C interface stays f32
        rtol, atol = half_tolerance(want, accumulation)
        result = compare(got, want, rtol=rtol, atol=atol)
        assert result.ok, f"{name} {output}: {result}"


@pytest.mark.parametrize("name", BLOCKS)
def test_fp16_is_really_half(name, compiled):
    """The outputs differ from fp32 by more than fp32 rounding would (values went through
    f16), and the weights file holds the weights in f16: half the bytes of fp32."""
    artifact, _ = compiled(name)
    for got, want in zip(*_run(artifact)):
        scale = float(np.sqrt(np.mean(np.square(want))))
        assert np.abs(got - want).max() > HALF_EPSILON / 8 * scale
    model = onnx.load(artifact.manifest["model"])
    floats = sum(numpy_helper.to_array(t).size for t in model.graph.initializer if t.data_type == TensorProto.FLOAT)
    weights = artifact.path / "weights.bin"
    assert weights.stat().st_size < 2 * floats + 4096 < 4 * floats


@pytest.mark.parametrize("name", BLOCKS)
def test_fp16_binaries_request_16_bit_storage(name, compiled):
    """Every kernel passes spirv-val; those reading or writing f16 declare Float16 and
    StorageBuffer16BitAccess, and the plan requires the matching device features."""
    artifact, _ = compiled(name)
    declaring = 0
    for binary in sorted((artifact.path / "kernels").glob("*.spv")):
        check = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", str(binary)], capture_output=True, text=True)
        assert check.returncode == 0, f"{binary.name}: {check.stdout}{check.stderr}"
        text = subprocess.run(["spirv-dis", str(binary)], capture_output=True, text=True, check=True).stdout
        if "OpTypeFloat 16" in text:
            assert "OpCapability Float16" in text and "OpCapability StorageBuffer16BitAccess" in text
            declaring += 1
        else:
            assert "OpCapability Float16" not in text
    assert declaring > 0
    plan = (artifact.path / "plan.txt").read_text()
    assert "shaderFloat16" in plan and "storageBuffer16BitAccess" in plan


def test_fp32_requests_no_16_bit_capability(tmp_path):
    model, _ = cnn_block()
    onnx.save(model, tmp_path / "cnn.onnx")
    compile_model(tmp_path / "cnn.onnx", tmp_path / "out", target="vulkan")
    assert "Float16" not in (tmp_path / "out" / "plan.txt").read_text()
    assert "storageBuffer16BitAccess" not in (tmp_path / "out" / "plan.txt").read_text()


def test_a_device_without_float16_is_refused(compiled, monkeypatch):
    """The runtime checks the plan's features against the device's at load
    (DNNF_VULKAN_HIDE_FEATURES plays a device without them)."""
    monkeypatch.setenv("DNNF_VULKAN_HIDE_FEATURES", "shaderFloat16")
    with pytest.raises(ArtifactError, match="the plan requires .*shaderFloat16"):
        compiled("cnn")[0].session()


@pytest.mark.parametrize("target", ["host", "aarch64"])
def test_cpu_targets_refuse_fp16(target, tmp_path):
    model, _ = cnn_block()
    onnx.save(model, tmp_path / "cnn.onnx")
    command = ["dnnf-compile", str(tmp_path / "cnn.onnx"), "-o", str(tmp_path / "out"),
               "--target", target, "--precision", "fp16"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode != 0
    assert f"target {target}" in result.stderr and "fp32 only" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", opt_in(MODEL_NAMES, ("squeezenet",), "DNNF_VULKAN_MODELS", "slow on lavapipe"))
def test_judged_model_in_fp16(name, checked_models, tmp_path):
    path = checked_models(name)
    compile_model(path, tmp_path / name, target="vulkan", precision="fp16")
    artifact = Artifact(tmp_path / name)
    names = [n for n, _, _ in artifact.inputs]
    inputs = make_inputs(names, [TensorSpec(shape, dtype) for _, dtype, shape in artifact.inputs], 0)
    got, _ = artifact.run(inputs)
    session = onnxruntime_session(str(path))
    feeds = {i.name for i in session.get_inputs()}
    want = session.run(None, {n: x for n, x in zip(names, inputs) if n in feeds})
    accumulation = longest_accumulation(onnx.load(str(path), load_external_data=False))
    for g, w, (output, _, _) in zip(got, want, artifact.outputs):
        rtol, atol = half_tolerance(w, accumulation)
        result = compare(g, w, rtol=rtol, atol=atol)
        print(f"{name} {output}: max error {np.abs(g - w).max():.3g}, |want| <= {np.abs(w).max():.3g}, "
              f"RMS {np.sqrt(np.mean(np.square(w))):.3g}, K {accumulation}: {result}")
        assert result.ok, f"{name} {output}: {result}"


def test_embedding_gather_reads_the_half_table(tmp_path):
    """A token embedding (T5's: a Gather through the table's 1-d view, then a layer norm)
    widens each element it reads: one dispatch per kernel, not the whole table widened
    to f32 by a dispatch of its own first."""
    vocab, d, seq = 500, 64, 40
    rng = np.random.default_rng(5)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
             helper.make_node("LayerNormalization", ["e", "g", "b"], ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(
        nodes, "embedding", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d])],
        [numpy_helper.from_array(rng.standard_normal((vocab, d)).astype(np.float32), "table"),
         numpy_helper.from_array((1 + 0.1 * rng.standard_normal(d)).astype(np.float32), "g"),
         numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), tmp_path / "e.onnx")
    compile_model(tmp_path / "e.onnx", tmp_path / "out", target="vulkan", precision="fp16")
    artifact = Artifact(tmp_path / "out")
    assert artifact.manifest["dispatches"] == artifact.manifest["kernels"]
    ids = rng.integers(0, vocab, (1, seq)).astype(np.int64)
    (got,), _ = artifact.run([ids])
    (want,) = onnxruntime_session(str(tmp_path / "e.onnx")).run(None, {"ids": ids})
    rtol, atol = half_tolerance(want, d)
    result = compare(got, want, rtol=rtol, atol=atol)
    assert result.ok, result
