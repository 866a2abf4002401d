"""dnnf-bench --target vulkan: dnnf's Vulkan code and IREE's on the same device, in one
process, with the JSON's numbers checked (latencies positive, dispatch counts whole,
both outputs within the tolerance of the judged reference); a model IREE cannot compile
is reported with IREE's error, not a crash; the host-only options are refused."""

import json

import onnx
import pytest

from dnnf_mlir.tools.bench import main
from dnnf_mlir.tools.common import ToolError
from dnnf_mlir.tools.iree_peer import compile_for_vulkan

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
    assert dnnf["device"] and iree["vulkan_target"] == document["iree_vulkan_target"] == "valhall"
    assert result["ratio_ms"] == pytest.approx(dnnf["ms"] / iree["ms"])
    assert result["ratio_dispatches"] == pytest.approx(dnnf["dispatches"] / iree["dispatches"])
    assert result["runs"] == 2 and document["summary"]["models_iree_ran"] == 1
    assert document["iree_version"] == "3.13.0"  # as tools/setup.sh pins it
    printed = capsys.readouterr().out
    assert "matmul_bias_relu: IREE (valhall) compiled in" in printed  # progress as it goes
    assert "IREE ms" in printed and "\nmatmul_bias_relu " in printed  # the table's header and row


def test_iree_failure_is_reported(model, tmp_path, capsys):
    """An IREE target it does not know: its error in the JSON and the table, dnnf's numbers still there."""
    result = _bench(model, tmp_path, "--iree-vulkan-target", "no-such-gpu")["models"]["matmul_bias_relu"]
    assert result["dnnf"]["ms"] > 0 and result["dnnf"]["error_ratio"] <= 1
    assert result["iree"]["error"].startswith("iree-compile: ") and "no-such-gpu" in result["iree"]["error"]
    assert "ratio_ms" not in result
    assert f"matmul_bias_relu: IREE failed: {result['iree']['error']}" in capsys.readouterr().out


def test_iree_tools_found_beside_python(model, tmp_path, monkeypatch):
    """pip puts iree-compile in the virtual environment's bin/: found there when the
    environment is not activated (PATH without it)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    program = compile_for_vulkan(model, tmp_path, "valhall")
    assert program.vmfb.is_file() and program.dispatches == 1


@pytest.mark.parametrize("flags, message", [
    (["--threads", "2"], "--threads is for --target host"),
    (["--fusion", "none"], "--fusion none is host only"),
])
def test_host_only_options_refused(model, flags, message):
    with pytest.raises(ToolError, match=message):
        main([str(model), "--target", "vulkan", *flags])
