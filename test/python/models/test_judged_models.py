"""The 14 judged models end to end: import, dnnf-opt verification, interpreter vs onnxruntime,
and the same after the ecg-rewrite pass (dnnf-opt --ecg-rewrite, the rewritten graph
written as bytecode, read back and interpreted).

Models are derived by tools/gen_models.py into its cache directory (random weights, nothing
downloaded); the shipped splat-weight light models must still import and run, and
match their expected output files. Checked as dnnf-run --check does by default,
element by element within 3e-5 + 1e-4 * |want| (why: dnnf_mlir/checking.py), never on
a degenerate reference: the CNNs ending in a Softmax also output its logits
(``checked_models``), and random inputs are scaled down where the softmax saturates.
"""

import json
import subprocess

import onnx
import pytest
from gen_models import CNN_SOURCES, LIGHT_DIR, MODEL_NAMES


def run(*command) -> str:
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def assert_checked(report: str, model):
    """Every output of ``model`` compared, none on a degenerate reference."""
    outputs = len(onnx.load(str(model), load_external_data=False).graph.output)
    assert report.count("ok output") == outputs, report
    assert "degenerate reference" not in report, report


@pytest.fixture(scope="session")
def imported(checked_models, tmp_path_factory):
    """name -> the model imported as bytecode, once per session (both tests read it)."""
    directory = tmp_path_factory.mktemp("imported")
    cache = {}

    def get(name):
        if name not in cache:
            bytecode = directory / f"{name}.mlirbc"
            run("dnnf-translate", "--import-onnx", checked_models(name), "--emit-bytecode", "-o", bytecode)
            cache[name] = bytecode
        return cache[name]

    return get


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_judged_model(name, checked_models, imported, tmp_path):
    onnx_path = checked_models(name)
    bytecode = imported(name)
    run("dnnf-opt", bytecode, "--emit-bytecode", "-o", tmp_path / "verified.mlirbc")
    assert_checked(run("dnnf-run", bytecode, "--reference", onnx_path, "--interpret", "--check"), onnx_path)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_judged_model_rewritten(name, checked_models, imported, tmp_path):
    """ecg-rewrite preserves every output (same tolerance) and does not add FLOPs."""
    rewritten, stats = tmp_path / f"{name}.rewritten.mlirbc", tmp_path / "rewrite.json"
    run("dnnf-opt", imported(name), f"--ecg-rewrite=stats-file={stats}", "--emit-bytecode", "-o", rewritten)
    total = json.loads(stats.read_text())["total"]
    assert total["flops_after"] <= total["flops_before"], total
    onnx_path = checked_models(name)
    assert_checked(run("dnnf-run", rewritten, "--reference", onnx_path, "--interpret", "--check"), onnx_path)


@pytest.mark.parametrize("source", sorted(set(CNN_SOURCES.values())))
def test_shipped_light_model(source):
    """Imports and runs; numerically this proves nothing: every weight is 0.02, so the
    softmax is uniform (constant), and the check says so."""
    path = LIGHT_DIR / f"light_{source}.onnx"
    onnx.checker.check_model(str(path))
    report = run("dnnf-run", path, "--interpret", "--check")
    assert "ok output 0 vs float64" in report
    assert "ok output 0 vs expected output files" in report
    assert report.count("degenerate reference: constant") == 2


def test_text_round_trip_is_byte_identical(models, tmp_path):
    """A real model's text form (weights as resource blobs) prints back byte for byte."""
    text = tmp_path / "squeezenet.mlir"
    run("dnnf-translate", "--import-onnx", models["squeezenet"], "-o", text)
    assert "dialect_resources" in text.read_text()
    run("dnnf-opt", text, "-o", tmp_path / "again.mlir")
    assert (tmp_path / "again.mlir").read_bytes() == text.read_bytes()
