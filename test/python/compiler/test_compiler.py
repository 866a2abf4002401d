"""compile_model and the artifacts it writes: weights file, C glue, host and AArch64 runs.

Outputs are compared with onnxruntime (ORT_DISABLE_ALL) as dnnf-run --check compares
them (``checking.compare``: |got - want| <= 3e-5 + 1e-4 * |want| per element).
"""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

from dnnf_mlir.checking import compare, make_inputs
from dnnf_mlir.codegen import CodegenError
from dnnf_mlir.codegen.cpu import UnsupportedCpuError
from dnnf_mlir.compiler import Artifact, ArtifactError, compile_model, cpu_library
from dnnf_mlir.compiler.weights import ALIGNMENT, read_weights, write_weights
from dnnf_mlir.ecg import TensorSpec
from dnnf_mlir.fusion.profile_db import PROFILE_DB_ENV
from dnnf_mlir.tools.common import onnxruntime_session

ROOT = Path(__file__).resolve().parents[3]
GELU_MLP = ROOT / "test" / "tools" / "dnnf-run" / "Inputs" / "gelu_mlp.onnxtxt"


def gelu_input(seed):
    """GELU_MLP's input x, as dnnf-run makes it."""
    return make_inputs(["x"], [TensorSpec((2, 4), np.float32)], seed)[0]


def assert_matches_onnxruntime(got, x):
    result = compare(got, onnxruntime_session(GELU_MLP).run(None, {"x": x})[0])
    assert result.ok and not result.degenerate, result


@pytest.fixture(scope="module")
def gelu_host(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("compiled") / "gelu"
    compile_model(GELU_MLP, outdir)
    return Artifact(outdir)


def test_weights_file_is_aligned_and_reads_back(tmp_path):
    values = [np.arange(7, dtype=np.float32), np.ones((3, 5), np.int64), np.full((2, 2), 0.5, np.float64)]
    layout = write_weights(str(tmp_path / "w.bin"), values)
    assert [w.offset % ALIGNMENT for w in layout] == [0, 0, 0]
    assert layout[1].offset >= values[0].nbytes
    for got, want in zip(read_weights(str(tmp_path / "w.bin"), layout), values):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def test_a_full_disk_names_the_weights_file():
    """/dev/full fails every write with ENOSPC: the error names the file (numpy's short
    write of a big array, "N requested and M written", named none)."""
    with pytest.raises(OSError) as raised:
        write_weights("/dev/full", [np.zeros(1 << 20, np.float32)])
    assert raised.value.filename == "/dev/full" and raised.value.strerror


def test_host_library_matches_onnxruntime(gelu_host):
    """MatMul + Erf GELU: the library, loaded with ctypes, calls libm's erff."""
    x = gelu_input(1)
    outputs, times = gelu_host.run([x], repeat=3)
    assert_matches_onnxruntime(outputs[0], x)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert gelu_host.manifest["inputs"] == [{"name": "x", "dtype": "float32", "shape": [2, 4]}]


def test_host_runner_executable_agrees_with_library(gelu_host, tmp_path):
    """dnnf_runner (C) reads and writes raw tensors; same numbers as the in-process run."""
    x = gelu_input(2)
    outputs, _ = gelu_host.run([x])
    x.tofile(tmp_path / "x.bin")
    runner = gelu_host.path / "dnnf_runner"
    subprocess.run([runner, gelu_host.path / "weights.bin", tmp_path / "x.bin", tmp_path / "y.bin"], check=True)
    from_runner = np.fromfile(tmp_path / "y.bin", np.float32).reshape(2, 3)
    np.testing.assert_array_equal(from_runner, outputs[0])


def test_wrong_input_is_an_error(gelu_host):
    with pytest.raises(ArtifactError, match=r"input x must be float32\[2, 4\], got float64\[2, 4\]"):
        gelu_host.run([np.zeros((2, 4))])


def test_a_directory_of_another_manifest_format_is_refused(gelu_host, tmp_path):
    """A directory an older dnnf-compile made (its manifest says how to run it otherwise)."""
    old = tmp_path / "old"
    shutil.copytree(gelu_host.path, old)
    manifest = json.loads((old / "manifest.json").read_text())
    (old / "manifest.json").write_text(json.dumps(dict(manifest, format=1)))
    with pytest.raises(ArtifactError, match=f"{old} was made by another version of dnnf-compile "
                                            r"\(manifest format 1, not 2\); compile it again"):
        Artifact(old)


def test_truncated_weights_file_is_reported(tmp_path):
    model = tmp_path / "mlp.onnx"
    subprocess.run(
        ["python", ROOT / "test/tools/dnnf-compile/Inputs/make_model.py", "matmul", model], check=True
    )
    compile_model(model, tmp_path / "out")
    weights = tmp_path / "out" / "weights.bin"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ArtifactError, match="weights file .* has 100 bytes, the model needs 12352"):
        Artifact(tmp_path / "out").run([np.zeros((24, 64), np.float32)])


def test_library_for_a_cpu_above_this_one_refuses_to_load(cpu_above_host, tmp_path):
    """Built for a CPU with features this machine lacks, the library compiles, records
    them, and refuses to load -- in this process, in dnnf_runner and in dnnf-run --
    naming what is missing, instead of dying on an illegal instruction."""
    outdir = tmp_path / "above"
    compile_model(GELU_MLP, outdir, cpu=cpu_above_host.cpu)
    artifact = Artifact(outdir)
    assert artifact.manifest["cpu"] == artifact.manifest["cpu_requested"] == cpu_above_host.cpu
    assert artifact.manifest["cpu_features"] == list(cpu_above_host.features)
    missing = cpu_above_host.missing_features()
    with pytest.raises(UnsupportedCpuError, match=f"compiled for host \\({cpu_above_host.cpu}\\) and needs") as error:
        artifact.run([np.zeros((2, 4), np.float32)])
    assert error.value.missing == missing
    np.zeros((2, 4), np.float32).tofile(tmp_path / "x.bin")
    runner = subprocess.run([outdir / "dnnf_runner", outdir / "weights.bin", tmp_path / "x.bin", tmp_path / "y.bin"],
                            capture_output=True, text=True)
    assert runner.returncode == 1, runner
    assert runner.stderr.strip() == (f"dnnf_runner: this library was compiled for host (CPU {cpu_above_host.cpu}) "
                                     f"and needs {', '.join(missing)}, which this CPU lacks")
    tool = subprocess.run(["dnnf-run", outdir], capture_output=True, text=True)
    assert tool.returncode == 1 and "Traceback" not in tool.stderr
    assert tool.stderr.strip() == f"dnnf-run: error: {error.value}"


def test_profiled_compilation_for_a_cpu_above_this_one_builds(cpu_above_host, tmp_path, monkeypatch, caplog):
    """The profiling oracle does not run code for a CPU this machine lacks: the model
    (MatMul -> Add -> Expand, a Table 3 yellow cell) builds with the conservative
    decision, says so once, and refuses to load here."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [16, 8])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 16, 32])
    rng = np.random.default_rng(0)
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("MatMul", ["x", "w"], ["m"]), onnx.helper.make_node("Add", ["m", "b"], ["a"]),
         onnx.helper.make_node("Expand", ["a", "shape"], ["y"])],
        "yellow", [x], [y],
        [onnx.numpy_helper.from_array(rng.standard_normal((8, 32)).astype(np.float32), "w"),
         onnx.numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b"),
         onnx.numpy_helper.from_array(np.array([2, 16, 32], np.int64), "shape")])
    model = tmp_path / "yellow.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), model)
    monkeypatch.setenv(PROFILE_DB_ENV, str(tmp_path / "profile.sqlite3"))
    with caplog.at_level("WARNING", logger="dnnf_mlir.fusion"):
        report = compile_model(model, tmp_path / "out", cpu=cpu_above_host.cpu, profile=True)
    assert report.manifest["fusion"]["profile"]["measured"] == 0 and report.manifest["fusion"]["profile"]["misses"] == 1
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "conservative decision" in warned[0]
    with pytest.raises(UnsupportedCpuError, match=f"compiled for host \\({cpu_above_host.cpu}\\)"):
        Artifact(tmp_path / "out").run([np.zeros((16, 8), np.float32)])


def test_failed_compilation_leaves_nothing_behind(tmp_path, monkeypatch):
    outdir = tmp_path / "out"
    outdir.mkdir()
    (outdir / "keep.txt").write_text("an earlier result")

    def fail(*args, **kwargs):
        raise CodegenError("llc failed")

    monkeypatch.setattr(cpu_library, "compile_object", fail)
    with pytest.raises(CodegenError):
        compile_model(GELU_MLP, outdir)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (outdir / "keep.txt").read_text() == "an earlier result"


def test_aarch64_library_runs_under_qemu(tmp_path, aarch64_toolchain):
    compile_model(GELU_MLP, tmp_path / "arm", target="aarch64")
    artifact = Artifact(tmp_path / "arm")
    assert not artifact.is_host
    x = gelu_input(3)
    outputs, times = artifact.run([x], repeat=1)
    assert_matches_onnxruntime(outputs[0], x)
    assert len(times) == 1
    with pytest.raises(ArtifactError, match="cannot be loaded into this process"):
        artifact.session()
