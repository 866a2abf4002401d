"""dnnf-bench --target opencl: dnnf's OpenCL code on the OpenCL device found (PoCL here),
timed in one process with its peers, dnnf's Vulkan code on the Vulkan device found
(lavapipe) and onnxruntime on the CPU (IREE has no OpenCL target); in fp16 also OpenCL in
fp32. The JSON's numbers are checked: latencies positive, dispatch counts those of the
manifest, the ratios those of the latencies, every output within its tolerance (fp16:
``half_tolerance``'s bound, said in the entry); host-only options are refused."""

import json

import onnx
import pytest
from test_vulkan import GRAPHS

from dnnf_mlir.tools.bench import main
from dnnf_mlir.tools.common import ToolError

QUICK = ["--warmup", "1", "--min-runs", "2", "--max-runs", "2", "--seconds", "0", "--no-cache"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A MatMul with its bias and Relu: one fused dispatch."""
    path = tmp_path_factory.mktemp("opencl-bench") / "matmul_bias_relu.onnx"
    onnx.save(GRAPHS["matmul_bias_relu"](), str(path))
    return path


def test_opencl_fp16_timed_with_its_peers(model, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main([str(model), "--target", "opencl", "--precision", "fp16", *QUICK, "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["target"] == "opencl" and document["precision"] == "fp16"
    result = document["models"]["matmul_bias_relu"]
    opencl, fp32, vulkan = result["opencl"], result["opencl_fp32"], result["vulkan"]
    assert opencl["device"].startswith("Portable Computing Language") and vulkan["device"]
    assert (opencl["precision"], fp32["precision"], vulkan["precision"]) == ("fp16", "fp32", "fp16")
    for entry in (opencl, fp32, vulkan):
        assert entry["ms"] > 0 and entry["dispatches"] == entry["kernels"] == 1
        assert entry["error_ratio"] <= 1 and not entry["degenerate"], entry
    assert opencl["opencl_kernels"] == 1
    assert "fp16 storage: rtol 8u" in opencl["tolerance"] and "float64" in fp32["tolerance"]
    assert result["onnxruntime"]["ms"] > 0 and result["runs"] == 2
    for peer in ("opencl_fp32", "vulkan", "onnxruntime"):
        assert result[f"ratio_ms_{peer}"] == pytest.approx(opencl["ms"] / result[peer]["ms"])
        assert document["summary"][f"geomean_ratio_ms_{peer}"] == pytest.approx(result[f"ratio_ms_{peer}"])
    table = capsys.readouterr().out
    assert "timing opencl, opencl_fp32, vulkan, onnxruntime" in table
    assert table.count("matmul_bias_relu fp16") == 1


@pytest.mark.parametrize("flags,message", [
    (["--threads", "2"], "--threads is for --target host: the OpenCL target runs on the GPU"),
    (["--fusion", "none"], "--target opencl benchmarks fusion dnnf; --fusion none is host only"),
])
def test_host_only_options_are_refused(model, flags, message):
    with pytest.raises(ToolError, match=message):
        main([str(model), "--target", "opencl", *flags])
