"""dnnf-bench --target vulkan: dnnf's Vulkan code and IREE's on the same device, in one
process, with the JSON's numbers checked (latencies positive, dispatch counts whole,
both outputs within the tolerance of the judged reference); a model IREE cannot compile
is reported with IREE's error, not a crash; the host-only options are refused."""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dataclasses import replace

from dnnf_mlir.tools import gpu_bench
from dnnf_mlir.tools.bench import main
from dnnf_mlir.tools.common import ToolError
from dnnf_mlir.tools.iree_peer import (DEFAULT_VULKAN_TARGET, IreeProcess, IreeSession, compile_for_vulkan,
                                       constant_folded)

from test_vulkan import GRAPHS

QUICK = ["--warmup", "1", "--min-runs", "2", "--max-runs", "2", "--seconds", "0"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A MatMul with its bias and Relu: one fused dispatch for dnnf."""
    path = tmp_path_factory.mktemp("vulkan-bench") / "matmul_bias_relu.onnx"
    onnx.save(GRAPHS["matmul_bias_relu"](), str(path))
    return path


def _bench(model, tmp_path, *flags) -> dict:
    out = tmp_path / "bench.json"
    assert main([str(model), "--target", "vulkan", *QUICK, "--json", str(out), *flags]) == 0
    return json.loads(out.read_text())


def test_dnnf_and_iree_timed_and_checked(model, tmp_path, capsys):
    document = _bench(model, tmp_path)
    result = document["models"]["matmul_bias_relu"]
    dnnf, iree = result["dnnf"], result["iree"]
    assert "error" not in iree, iree
    for side in (dnnf, iree):
        assert side["ms"] > 0
        assert isinstance(side["dispatches"], int) and side["dispatches"] >= 1
        assert side["error_ratio"] <= 1, side["tolerance"]
    assert dnnf["dispatches"] == 1 and dnnf["spirv_kernels"] == 1
    assert dnnf["device"] and iree["vulkan_target"] == document["iree_vulkan_target"] == DEFAULT_VULKAN_TARGET
    assert result["ratio_ms"] == pytest.approx(dnnf["ms"] / iree["ms"])
    assert result["ratio_dispatches"] == pytest.approx(dnnf["dispatches"] / iree["dispatches"])
    assert result["runs"] == 2 and document["summary"]["models_iree_ran"] == 1
    assert document["iree_version"] == "3.13.0"  # as tools/setup.sh pins it
    printed = capsys.readouterr().out
    assert f"matmul_bias_relu: IREE ({DEFAULT_VULKAN_TARGET}) compiled in" in printed  # progress as it goes
    assert f"matmul_bias_relu: IREE's error {iree['error_ratio']:.2g} of the tolerance" in printed
    assert "IREE ms" in printed and "\nmatmul_bias_relu " in printed  # the table's header and row


def test_iree_failure_is_reported(model, tmp_path, capsys):
    """An IREE target it does not know: its error in the JSON and the table, dnnf's numbers still there."""
    result = _bench(model, tmp_path, "--iree-vulkan-target", "no-such-gpu")["models"]["matmul_bias_relu"]
    assert result["dnnf"]["ms"] > 0 and result["dnnf"]["error_ratio"] <= 1
    assert result["iree"]["error"].startswith("iree-compile: ") and "no-such-gpu" in result["iree"]["error"]
    assert "ratio_ms" not in result
    assert f"matmul_bias_relu: IREE failed: {result['iree']['error']}" in capsys.readouterr().out


def _large_matmul(directory) -> str:
    """A 512 x 512 x 512 MatMul: 268 MFLOP, many milliseconds a run on lavapipe."""
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"])], "large_matmul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [512, 512])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [512, 512])],
        [numpy_helper.from_array(rng.standard_normal((512, 512)).astype(np.float32), "b")])
    path = directory / "large_matmul.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_iree_run_past_its_time_limit_is_a_bound(tmp_path, capsys):
    """IREE's run stopped after 1 ms: its latency reported as over that, the ratio as
    under its bound (the table's "<"), the geometric mean an upper bound; dnnf's numbers
    all there."""
    document = _bench(_large_matmul(tmp_path), tmp_path, "--iree-seconds", "0.001")
    result = document["models"]["large_matmul"]
    iree = result["iree"]
    assert iree["ms_over"] == 1 and "ms" not in iree and "error_ratio" not in iree and iree["dispatches"] >= 1
    assert result["ratio_ms_under"] == pytest.approx(result["dnnf"]["ms"]) and "ratio_ms" not in result
    assert result["dnnf"]["error_ratio"] <= 1
    assert document["summary"] | {"geomean_ratio_ms": None} == {
        "models_iree_ran": 0, "models_iree_over_time": 1, "geomean_ratio_ms": None,
        "geomean_ratio_ms_is_upper_bound": True, "geomean_ratio_dispatches": result["ratio_dispatches"]}
    printed = capsys.readouterr().out
    assert "large_matmul: IREE had not finished a run after 0.001 s: stopped" in printed
    assert f"<{result['ratio_ms_under']:.2g}" in printed and "IREE over 0.001 s" in printed


class _SlowFirstRun(IreeProcess):
    """IREE's process with its first run made to report 20 minutes."""

    def run(self, seconds):
        result = super().run(seconds)
        self.runs = getattr(self, "runs", []) + [result.ms]
        return replace(result, ms=1.2e6) if len(self.runs) == 1 else result


def test_iree_run_slower_than_the_rounds_allow_is_timed_once(model, tmp_path, monkeypatch):
    """When IREE's first run is so slow that the warm-up and rounds would take longer
    than --iree-seconds, its outputs are checked and the run after it is its time, not
    timed again in rounds."""
    processes = []
    monkeypatch.setattr(gpu_bench, "IreeProcess", lambda *args: processes.append(_SlowFirstRun(*args)) or processes[-1])
    result = _bench(model, tmp_path)["models"]["matmul_bias_relu"]
    (process,) = processes
    assert len(process.runs) == 2 and result["iree"]["ms"] == process.runs[1] < 1.2e6
    assert result["iree"]["runs"] == 1 and result["iree"]["error_ratio"] <= 1
    assert result["runs"] == 2 and result["ratio_ms"] == pytest.approx(result["dnnf"]["ms"] / process.runs[1])


def test_iree_tools_found_beside_python(model, tmp_path, monkeypatch):
    """pip puts iree-compile in the virtual environment's bin/: found there when the
    environment is not activated (PATH without it)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    program = compile_for_vulkan(model, tmp_path, "valhall")
    assert program.vmfb.is_file() and program.dispatches == 1


def attention_mask_graph(length: int) -> onnx.ModelProto:
    """The attention mask of the exported GPT-2 and DistilBERT, shrunk: an int64 mask
    cast to bool, gathered at constant int64 indices, and-ed with the causal mask, then
    expanded to a shape computed through Where on shape tensors (ONNX shape inference
    leaves it [?,?,L,L]) and added to the scores as 0 or -10000."""
    constants = {
        "positions": np.arange(length, dtype=np.int64).reshape(1, 1, 1, length),
        "row_shape": np.array([1, 1, 1, length], np.int64),
        "causal": np.tril(np.ones((length, length), bool)).reshape(1, 1, length, length),
        "target": np.array([1, 1, length, length], np.int64),
        "rank": np.array([4], np.int64), "minus_one": np.array(-1, np.int64),
        "zero": np.array(0, np.float32), "masked": np.array(-10000, np.float32)}
    node = helper.make_node
    graph = helper.make_graph([
        node("Cast", ["mask"], ["keep"], to=TensorProto.BOOL),
        node("Flatten", ["keep"], ["column"], axis=2),
        node("Gather", ["column", "positions"], ["picked"], axis=0),
        node("Reshape", ["picked", "row_shape"], ["row"]),
        node("And", ["causal", "row"], ["visible"]),
        node("ConstantOfShape", ["rank"], ["ones"], value=numpy_helper.from_array(np.array([1], np.int64))),
        node("Mul", ["ones", "minus_one"], ["minus_ones"]),
        node("Equal", ["target", "minus_ones"], ["unknown"]),
        node("Where", ["unknown", "ones", "target"], ["shape"]),
        node("Expand", ["visible", "shape"], ["expanded"]),
        node("Where", ["expanded", "zero", "masked"], ["bias"]),
        node("Add", ["scores", "bias"], ["out"]),
    ], "attention_mask", [helper.make_tensor_value_info("mask", TensorProto.INT64, [1, length]),
                          helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, length, length])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 2, length, length])],
        [numpy_helper.from_array(value, name) for name, value in constants.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_constant_folding_leaves_no_shape_arithmetic(tmp_path):
    """What IREE imports: the Expand whose computed shape ONNX shape inference leaves
    dynamic (GPT-2 then fails in IREE's Vulkan lowering) is folded away, and the int64
    mask is an int32 input."""
    path = tmp_path / "attention_mask.onnx"
    onnx.save(attention_mask_graph(8), str(path))
    folded = onnx.load(str(constant_folded(path, tmp_path / "folded.onnx")))
    ops = {node.op_type for node in folded.graph.node}
    assert not ops & {"Expand", "ConstantOfShape", "Equal", "Mul"}, ops
    assert {value.name: value.type.tensor_type.elem_type for value in folded.graph.input} == {
        "mask": TensorProto.INT32, "scores": TensorProto.FLOAT}


def test_iree_compiles_the_transformers_attention_mask(tmp_path):
    """valhall has no Int64 compute: the peer demotes int64, and passes the int64 mask
    as int32 because IREE's demotion reads an int64 input's buffer as int32 (the mask
    1 1 0 1 read as 1 0 1 0); checked by running IREE's program against numpy."""
    length = 8
    path = tmp_path / "attention_mask.onnx"
    onnx.save(attention_mask_graph(length), str(path))
    program = compile_for_vulkan(path, tmp_path / "iree", "valhall")
    rng = np.random.default_rng(0)
    mask = np.array([[1, 1, 0, 1, 1, 1, 0, 1]], np.int64)
    scores = rng.standard_normal((1, 2, length, length)).astype(np.float32)
    run = IreeSession(program).bind([mask, scores])
    run()
    visible = np.tril(np.ones((length, length), bool)) & mask.astype(bool)[:, None, :]
    expected = scores + np.where(visible, np.float32(0), np.float32(-10000))
    np.testing.assert_allclose(run.outputs[0], expected, rtol=0, atol=1e-6)  # additions of 0 or -10000: exact


def test_iree_layer_norm_is_right_on_this_device(tmp_path):
    """A layer norm row of 768, one of IREE's subgroup reductions: with the peer's
    default target it matches numpy (valhall's 16-wide subgroups on lavapipe's 8-wide
    ones gave NaN in every element)."""
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5)], "layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 768])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 768])],
        [numpy_helper.from_array(np.linspace(0.5, 1.5, 768, dtype=np.float32), "scale"),
         numpy_helper.from_array(np.linspace(-1, 1, 768, dtype=np.float32), "bias")])
    path = tmp_path / "layer_norm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    x = np.random.default_rng(0).standard_normal((1, 16, 768)).astype(np.float32) * 3 + 1
    run = IreeSession(compile_for_vulkan(path, tmp_path / "iree", DEFAULT_VULKAN_TARGET)).bind([x])
    run()
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * np.linspace(0.5, 1.5, 768) + np.linspace(-1, 1, 768)
    np.testing.assert_allclose(run.outputs[0], expected, rtol=1e-4, atol=1e-4)  # float32 sums over 768


@pytest.mark.parametrize("flags, message", [
    (["--threads", "2"], "--threads is for --target host"),
    (["--fusion", "none"], "--fusion none is host only"),
])
def test_host_only_options_refused(model, flags, message):
    with pytest.raises(ToolError, match=message):
        main([str(model), "--target", "vulkan", *flags])
