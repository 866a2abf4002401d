"""dnnf-bench --kernels: two families of the sweep, end to end (small shapes)."""

import json

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from dnnf_mlir.checking import compare
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.kernel_sweep.cases import CASES, cases_of
from dnnf_mlir.roofline import Roofline
from dnnf_mlir.tools import bench
from dnnf_mlir.tools.common import ToolError, onnxruntime_session

ROOFLINE = Roofline("znver4", "test CPU", 16, fma_gflops=100.0, triad_gbs={"1": 20.0}, measured_at=0)


def test_two_families_swept_against_onnxruntime_and_the_roofline(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "machine_roofline", lambda cpu=None: ROOFLINE)
    report = tmp_path / "kernels.json"
    status = bench.main(["--kernels", "--families", "cumsum,DequantizeLinear", "--min-runs", "3", "--max-runs", "10",
                         "--seconds", "0.1", "--json", str(report)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "[1/2] cumsum:" in captured.err and "[2/2] dequantize-linear:" in captured.err  # progress as it runs
    document = json.loads(report.read_text())
    cases, floor = document["cases"], document["call_floor_seconds"]
    # A timed call of a one-element kernel: more than nothing, less than any case here.
    assert 0 < floor < min(result["kernel_ms"] for result in cases.values()) / 1e3
    assert f"call floor: {1e9 * floor:.0f} ns" in captured.out
    assert set(cases) == {"cumsum", "dequantize-linear"}
    for name, result in cases.items():
        assert "error" not in result, result
        assert result["error_ratio"] <= 1  # within the tolerance of the float64 reference
        assert result["dnnf_ms"] > 0 and result["ort_ms"] > 0
        busy = result["kernel_ms"] / 1e3
        assert result["gbs"] == pytest.approx(result["bytes"] / busy / 1e9)
        # The time the roofline allows, plus the floor of each timed call, over the kernels' time.
        allowed = (result["flops"] / ROOFLINE.peak_gflops() if result["bound"] == "compute"
                   else result["bytes"] / ROOFLINE.bandwidth_gbs()) / 1e9
        assert result["roofline_fraction"] == pytest.approx((allowed + floor * result["kernels"]) / busy)
    # Dequantization reads a byte and writes four per element: memory-bound, 5 bytes each.
    assert cases["dequantize-linear"]["bound"] == "memory"
    assert cases["dequantize-linear"]["bytes"] == 5 * 64 * 56 * 56
    rows = [line.split()[0] for line in captured.out.splitlines()
            if line.split()[:1] in (["cumsum"], ["dequantize-linear"])]
    fractions = [cases[name]["roofline_fraction"] for name in rows]
    assert len(rows) == 2 and fractions == sorted(fractions)  # worst first


def test_every_family_of_the_issue_has_a_case():
    families = {case.family for case in CASES}
    assert families >= {"Resize", "ConvTranspose", "Conv", "LSTM", "GRU", "Einsum", "TopK", "ScatterND",
                        "ScatterElements", "GatherND", "GridSample", "CumSum", "QuantizeLinear", "DequantizeLinear",
                        "QLinearConv", "QLinearMatMul", "MatMulInteger", "Attention", "RMSNormalization",
                        "RotaryEmbedding", "Conv1D", "Conv1x1", "MatMul", "Broadcast", "Reduce", "Conv2D", "Conv3D"}
    assert {c.name for c in cases_of(["resize"])} == {"resize-nearest", "resize-linear", "resize-cubic"}
    with pytest.raises(ValueError, match="no kernel family softmax"):
        cases_of(["softmax"])
    with pytest.raises(ToolError, match="no kernel family nope"):
        bench.main(["--kernels", "--families", "nope"])
    with pytest.raises(ToolError, match="give no MODEL"):
        bench.main(["--kernels", "m.onnx"])


def _conv_attributes(case) -> dict:
    model, _ = case.model()
    (node,) = model.graph.node
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def test_the_1d_convolutions_cover_stride_dilation_and_groups():
    attributes = [_conv_attributes(case) for case in cases_of(["conv1d"])]
    assert {a["strides"][0] for a in attributes} >= {1, 2} and {a["dilations"][0] for a in attributes} >= {1, 4}
    assert {a["group"] for a in attributes} >= {1, 8, 256}  # dense, grouped, depthwise


def assert_compiled_case_matches_onnxruntime(case, tmp_path):
    """``case`` compiled for this CPU computes what onnxruntime computes (the dnnf-run
    tolerance, against its float32 result), on outputs far from zero."""
    model, feeds = case.model()
    path = tmp_path / f"{case.name}.onnx"
    onnx.save(model, path)
    compile_model(path, tmp_path / "out")
    artifact = Artifact(tmp_path / "out")
    (got,), _ = artifact.run([feeds[name] for name, _, _ in artifact.inputs])
    (want,) = onnxruntime_session(path).run(None, feeds)
    result = compare(got, want)
    assert result.ok and not result.degenerate and np.abs(want).max() > 1, result


@pytest.mark.parametrize("case", cases_of(["conv1d"]), ids=lambda case: case.name)
def test_1d_convolution_cases_match_onnxruntime(case, tmp_path):
    """Each 1-D case compiled for this CPU computes what onnxruntime computes (the
    dnnf-run tolerance, against its ORT_DISABLE_ALL float32 result)."""
    assert_compiled_case_matches_onnxruntime(case, tmp_path)


@pytest.mark.parametrize("name", ["conv1x1-320-1280-3", "conv1x1-160-960-7"])
def test_small_output_1x1_cases_match_onnxruntime(name, tmp_path):
    """A 1x1 case whose output columns fit one partial vector (3x3) and one that the
    matmul pads to whole register tiles (7x7) compute what onnxruntime computes."""
    (case,) = cases_of([name])
    assert_compiled_case_matches_onnxruntime(case, tmp_path)


def _input_shapes(case) -> list:
    model, feeds = case.model()
    return [feeds[i.name].shape for i in model.graph.input]


def test_the_grid_covers_rows_broadcasts_reduction_axes_and_conv_variants():
    """Issue 29's grid: matmul rows from 7 to 4096 (and a tiny and a prime case), every
    broadcast pattern of a 4-D tensor, a reduction over each axis of a 3-D one and over
    all, 2-D convolutions dilated, non-square and batched, 3-D ones dense and depthwise."""
    rows = {_input_shapes(case)[0][-2] for case in cases_of(["matmul"])}
    assert {7, 4096, 3, 127} <= rows
    broadcasts = {shape for case in cases_of(["broadcast"]) for shape in _input_shapes(case)[1:]}
    assert {(1, 64, 56, 56), (), (56,), (56, 1), (64, 1, 1), (1, 1, 56, 1)} <= broadcasts
    axes = {tuple(next((numpy_helper.to_array(t).tolist() for t in case.model()[0].graph.initializer), ["all"]))
            for case in cases_of(["reduce"]) if not case.name.startswith("softmax")}
    assert {(0,), (1,), (2,), ("all",)} <= axes
    convs = [_conv_attributes(case) | {"rank": len(_input_shapes(case)[0]) - 2, "batch": _input_shapes(case)[0][0],
                                       "kernel": [list(t.dims[2:]) for t in case.model()[0].graph.initializer
                                                  if t.name == "w"][0]}
             for case in cases_of(["conv2d", "conv3d"])]
    assert any(c["dilations"] == [2, 2] for c in convs) and any(c["kernel"] == [1, 7] for c in convs)
    assert any(c["batch"] > 1 for c in convs) and any(c["strides"] == [2, 2] for c in convs)
    assert {c["group"] for c in convs if c["rank"] == 3} == {1, 32}  # dense and depthwise 3-D


@pytest.mark.parametrize("name", ["matmul-3x5x7-tiny", "matmul-127x257x131-prime", "gemm-7x2048x1000",
                                  "add-both", "add-channel-prime", "mul-tiny", "reducesum-axis1", "reducemean-rows4096x7",
                                  "conv2d-61x29x29-3x3-67", "conv2d-4x5x5-3x3-8",
                                  "conv1d-7x13-3-5", "conv3d-32x8x28x28-3x3x3-32-g32", "resize-linear",
                                  "resize-cubic"])
def test_grid_cases_match_onnxruntime(name, tmp_path):
    """The grid's odd, prime and tiny cases (partial vectors and tiles everywhere), a
    broadcast on both sides, a Gemm reading its weights transposed, a depthwise 3-D
    convolution, the interpolating resizes (the width resized across the rows),
    compiled for this CPU, compute what onnxruntime computes."""
    (case,) = cases_of([name])
    assert_compiled_case_matches_onnxruntime(case, tmp_path)
