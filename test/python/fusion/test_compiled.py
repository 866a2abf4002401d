"""Models compiled with ecg-fuse before convert-ecg-to-linalg (which inlines the fused
bodies) still match onnxruntime: lowering/compile.pipeline stays as it is, a copy
with ecg-fuse inserted is used through $DNNF_LOWERING."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
from gen_models import DEFAULT_DIR, ensure_models  # noqa: E402


@pytest.fixture(scope="module")
def lowering(tmp_path_factory):
    directory = tmp_path_factory.mktemp("lowering") / "lowering"
    shutil.copytree(ROOT / "lowering", directory)
    pipeline = directory / "compile.pipeline"
    text = pipeline.read_text()
    assert "  ecg-rewrite,\n" in text
    pipeline.write_text(text.replace("  ecg-rewrite,\n", "  ecg-rewrite,\n  ecg-fuse,\n"))
    return directory


@pytest.mark.parametrize("name", ["resnet50", "bert_base"])
def test_compiled_with_fusion(name, lowering, tmp_path):
    model = ensure_models(DEFAULT_DIR)[name]
    env = dict(os.environ, DNNF_LOWERING=str(lowering))
    for command in (["dnnf-compile", model, "-o", tmp_path / name], ["dnnf-run", tmp_path / name, "--check"]):
        result = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
    assert "ok output 0 vs onnxruntime" in result.stdout
