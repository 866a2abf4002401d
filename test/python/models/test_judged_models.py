"""The 14 judged models end to end: import, dnnf-opt verification, interpreter vs onnxruntime,
and the same after the ecg-rewrite pass (dnnf-opt --ecg-rewrite, the rewritten graph
written as bytecode, read back and interpreted).

Models are derived by tools/gen_models.py into its cache directory (random weights, nothing
downloaded); the shipped splat-weight light models must still import and run, and
match their expected output files. Tolerance: relative error (max|got - want| /
max|want|) at most 1e-4, as dnnf-run checks by default.
"""

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
from gen_models import CNN_SOURCES, DEFAULT_DIR, LIGHT_DIR, MODEL_NAMES, ensure_models  # noqa: E402

def run(*command) -> str:
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


@pytest.fixture(scope="session")
def models():
    return ensure_models(DEFAULT_DIR)


@pytest.fixture(scope="session")
def imported(models, tmp_path_factory):
    """name -> the model imported as bytecode, once per session (both tests read it)."""
    directory = tmp_path_factory.mktemp("imported")
    cache = {}

    def get(name):
        if name not in cache:
            bytecode = directory / f"{name}.mlirbc"
            run("dnnf-translate", "--import-onnx", models[name], "--emit-bytecode", "-o", bytecode)
            cache[name] = bytecode
        return cache[name]

    return get


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_judged_model(name, models, imported, tmp_path):
    onnx_path = models[name]
    bytecode = imported(name)
    run("dnnf-opt", bytecode, "--emit-bytecode", "-o", tmp_path / "verified.mlirbc")
    report = run("dnnf-run", bytecode, "--reference", onnx_path, "--interpret", "--check")
    assert "FAIL" not in report
    assert "ok output 0 vs onnxruntime" in report


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_judged_model_rewritten(name, models, imported, tmp_path):
    """ecg-rewrite preserves every output (same tolerance) and does not add FLOPs."""
    rewritten, stats = tmp_path / f"{name}.rewritten.mlirbc", tmp_path / "rewrite.json"
    run("dnnf-opt", imported(name), f"--ecg-rewrite=stats-file={stats}", "--emit-bytecode", "-o", rewritten)
    total = json.loads(stats.read_text())["total"]
    assert total["flops_after"] <= total["flops_before"], total
    report = run("dnnf-run", rewritten, "--reference", models[name], "--interpret", "--check")
    assert "FAIL" not in report
    assert "ok output 0 vs onnxruntime" in report


@pytest.mark.parametrize("source", sorted(set(CNN_SOURCES.values())))
def test_shipped_light_model(source):
    path = LIGHT_DIR / f"light_{source}.onnx"
    onnx.checker.check_model(str(path))
    report = run("dnnf-run", path, "--interpret", "--check")
    assert "ok output 0 vs onnxruntime" in report
    assert "ok output 0 vs expected output files" in report


def test_text_round_trip_is_byte_identical(models, tmp_path):
    """A real model's text form (weights as resource blobs) prints back byte for byte."""
    text = tmp_path / "squeezenet.mlir"
    run("dnnf-translate", "--import-onnx", models["squeezenet"], "-o", text)
    assert "dialect_resources" in text.read_text()
    run("dnnf-opt", text, "-o", tmp_path / "again.mlir")
    assert (tmp_path / "again.mlir").read_bytes() == text.read_bytes()
