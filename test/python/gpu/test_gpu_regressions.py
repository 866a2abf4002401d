"""Graphs the fuzzer's GPU mode once failed on (``regressions/*.onnx``, each a complete
reproducer: its metadata says how its inputs are drawn). Every one now checks clean on
both GPU targets, in fp32 against onnxruntime within the fuzzer's tolerance
(``fuzz/gpu.py``); README.md there says what each one found."""

from pathlib import Path

import pytest

from dnnf_mlir.fuzz.gpu import GPU_TARGETS, check_cases_on
from dnnf_mlir.fuzz.graph import Case

CASES = sorted((Path(__file__).parent / "regressions").glob("*.onnx"))


def test_there_are_regressions():
    assert CASES, "no regression cases found next to this test"


@pytest.mark.parametrize("target", GPU_TARGETS)
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_regression(path, target):
    failures = check_cases_on(target, [Case.from_bytes(path.read_bytes())])
    assert not failures, "\n".join(map(str, failures))
