"""dnnf-run --profile: every kernel launch of a compiled model timed in context."""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.codegen.cpu.features import VNNI_FEATURE
from dnnf_mlir.codegen.cpu.target import host_target
from dnnf_mlir.compiler import Artifact, CompileError, compile_model
from dnnf_mlir.kernel_profile.report import ProfileError, profile_runs
from dnnf_mlir.kernel_sweep.cases import cases_of
from dnnf_mlir.roofline import Roofline
from dnnf_mlir.tools import run as run_tool
from dnnf_mlir.tools.common import ToolError

# A roofline fixed here, so that no test measures the machine (test_roofline.py does).
ROOFLINE = Roofline("znver4", "test CPU", 16, fma_gflops=100.0, triad_gbs={"1": 20.0}, measured_at=0)


def _model(path):
    """conv (16 -> 32 channels, 3x3 over 48x48) + relu, flatten, matmul, sigmoid: with
    --fusion none five kernels, the convolution about 85% of the work."""
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal((32, 16, 3, 3)).astype(np.float32) * 0.1, "w"),
        numpy_helper.from_array(rng.standard_normal((32 * 46 * 46, 10)).astype(np.float32) * 0.01, "m"),
        numpy_helper.from_array(np.array([1, -1], np.int64), "s"),
    ]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Reshape", ["r", "s"], ["f"]), helper.make_node("MatMul", ["f", "m"], ["y0"]),
             helper.make_node("Sigmoid", ["y0"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 48, 48])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    graph = helper.make_graph(nodes, "profiled", [x], [y], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("profiled")
    model = _model(directory / "profiled.onnx")
    compile_model(model, directory / "out", fusion="none", profile_kernels=True)
    return Artifact(directory / "out")


@pytest.fixture
def fixed_roofline(monkeypatch) -> list:
    """The CPUs the roofline was asked for, ``ROOFLINE`` answered each time."""
    asked = []
    monkeypatch.setattr(run_tool, "machine_roofline", lambda cpu=None: asked.append(cpu) or ROOFLINE)
    return asked


def test_launches_recorded_with_the_compilers_statistics(profiled):
    launches = profiled.manifest["kernel_launches"]
    assert len(launches) == profiled.manifest["kernels"] == 5
    conv = launches[0]
    assert conv["ops"] == "conv" and conv["shapes"] == "1x16x48x48xf32, 32x16x3x3xf32 -> 1x32x46x46xf32"
    assert conv["flops"] == 2 * 32 * 46 * 46 * 16 * 9
    assert conv["bytes"] == 4 * (16 * 48 * 48 + 32 * 16 * 9 + 32 * 46 * 46)
    assert [launch["ops"] for launch in launches] == ["conv", "relu", "reshape", "mat_mul", "sigmoid"]


def test_profile_table_and_trace(profiled, fixed_roofline, tmp_path, capsys):
    trace_file = tmp_path / "trace.json"
    status = run_tool.main([str(profiled.path), "--profile", "--repeat", "6", "--profile-json", str(trace_file),
                            "--check"])
    out = capsys.readouterr().out
    assert status == 0, out
    rows = [line for line in out.splitlines() if "kernel_" in line and ": " in line and "%" in line]
    assert len(rows) == profiled.manifest["kernels"]
    times = [float(row.split()[0]) for row in rows]
    assert times == sorted(times, reverse=True)  # sorted by time
    assert "conv" in rows[0]  # the convolution dominates
    assert "ok output 0" in out
    assert fixed_roofline == [profiled.manifest["cpu"]]  # the peak of the code's own vectors

    events = json.loads(trace_file.read_text())["traceEvents"]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    runs = [e for e in events if e["cat"] == "Session"]
    kernels = [e for e in events if e["cat"] == "Node"]
    assert len(runs) == 6 and len(kernels) == 6 * 5
    busy = []
    for run in runs:
        inside = [k for k in kernels if run["ts"] <= k["ts"] and k["ts"] + k["dur"] <= run["ts"] + run["dur"] + 1e-3]
        assert len(inside) == 5  # each launch within its run, in program order
        assert [k["args"]["launch"] for k in sorted(inside, key=lambda k: k["ts"])] == list(range(5))
        busy.append(sum(k["dur"] for k in inside) / run["dur"])
    # The kernels are most of a run; the rest is the glue, the buffers, the ctypes call.
    assert all(fraction <= 1 for fraction in busy) and sorted(busy)[len(busy) // 2] > 0.5


def test_table_figures(profiled):
    x = np.random.default_rng(1).standard_normal((1, 16, 48, 48)).astype(np.float32)
    _, profile = profile_runs(profiled.session(), [x], 4)
    rows = profile.rows(ROOFLINE)
    conv = next(row for row in rows if row.ops == "conv")
    launch = profiled.manifest["kernel_launches"][conv.launch]
    assert conv.gflops == pytest.approx(launch["flops"] / conv.seconds / 1e9)
    assert conv.bound == "compute" and conv.roofline_fraction == pytest.approx(conv.gflops / 100.0)
    relu = next(row for row in rows if row.ops == "relu")
    assert relu.bound == "memory" and relu.roofline_fraction == pytest.approx(relu.gbs / 20.0)
    assert sum(row.share for row in rows) == pytest.approx(1 - profile.outside_seconds() / profile.total_seconds())


def test_byte_products_judged_by_the_int8_peak(tmp_path):
    """MatMulInteger on VNNI: its product's FLOPs are recorded as byte dot products and
    judged against the int8 peak; without VNNI (x86-64-v3) the f32 product the code
    keeps is judged against the FMA's."""
    (case,) = cases_of(["matmul-integer"])
    model, feeds = case.model()
    onnx.save(model, tmp_path / "m.onnx")
    compile_model(tmp_path / "m.onnx", tmp_path / "out", profile_kernels=True)
    artifact = Artifact(tmp_path / "out")
    launches = artifact.manifest["kernel_launches"]
    int8 = [launch.get("int8_flops", 0) for launch in launches]
    vnni = VNNI_FEATURE in host_target().features
    assert sum(int8) == (2 * 128 * 256 * 256 if vnni else 0)
    machine = Roofline("znver4", "test CPU", 16, fma_gflops=100.0, triad_gbs={"1": 20.0}, measured_at=0,
                       int8_gops=400.0, int8_instruction="vpdpbusd zmm (AVX512-VNNI)")
    _, profile = profile_runs(artifact.session(), [feeds["a"]], 4)
    product = max(profile.rows(machine), key=lambda row: row.gflops)
    launch = launches[product.launch]
    assert launch["flops"] >= 2 * 128 * 256 * 256
    peak = 400.0 if vnni else 100.0
    assert product.bound == ("int8" if vnni else "compute")
    assert product.roofline_fraction == pytest.approx(product.gflops / peak, rel=0.01)


@pytest.mark.parametrize("threads", [1, 2])  # 2: the glue sizes the team per run beside the timers
def test_inference_session_profiles_every_run(tmp_path, threads):
    model = _model(tmp_path / "profiled.onnx")
    session = InferenceSession(str(model), profile_kernels=True, fusion="none", use_cache=False, threads=threads)
    x = np.random.default_rng(2).standard_normal((1, 16, 48, 48)).astype(np.float32)
    for _ in range(3):
        session.run(None, {"x": x})
    assert len(session.kernel_profile().runs) == 3
    trace = json.loads(open(session.end_profiling(tmp_path / "t.json")).read())
    assert sum(e["cat"] == "Node" for e in trace["traceEvents"]) == 3 * 5


def test_uninstrumented_artifact_is_refused(tmp_path, fixed_roofline):
    model = _model(tmp_path / "plain.onnx")
    compile_model(model, tmp_path / "plain", fusion="none")
    plain = Artifact(tmp_path / "plain")
    assert "kernel_launches" not in plain.manifest
    assert "dnnf_kernel_enter" not in (tmp_path / "plain" / "model.c").read_text()  # no timer at all
    assert plain.session().kernel_times() is None
    refusal = "compiled without kernel timers: compile it with dnnf-compile --profile-kernels"
    with pytest.raises(ToolError, match=refusal):
        run_tool.main([str(tmp_path / "plain"), "--profile"])
    session = InferenceSession(str(model), fusion="none", use_cache=False, threads=1)
    session.run(None, {"x": np.zeros((1, 16, 48, 48), np.float32)})
    with pytest.raises(ProfileError, match="profile_kernels=True"):
        session.kernel_profile()


def test_profiling_needs_cpu_kernel_functions(tmp_path):
    model = _model(tmp_path / "m.onnx")
    with pytest.raises(CompileError, match="--profile-kernels times kernel functions; it needs ecg-outline-kernels"):
        compile_model(model, tmp_path / "out", outline=False, profile_kernels=True)
    with pytest.raises(CompileError, match="--profile-kernels times CPU kernels; target vulkan is not a CPU"):
        compile_model(model, tmp_path / "out", target="vulkan", profile_kernels=True)
    assert not (tmp_path / "out").exists()
