"""Graphs the fuzzer once failed on (``regressions/*.onnx``, each saved shrunk by
``tools/fuzz.sh``; its metadata holds how to make the inputs): every one now checks
clean through every path. README.md there says what each one found."""

from pathlib import Path

import pytest

from dnnf_mlir.fuzz.differential import check_cases
from dnnf_mlir.fuzz.graph import Case

CASES = sorted((Path(__file__).parent / "regressions").glob("*.onnx"))


def test_there_are_regressions():
    assert CASES, "no regression cases found next to this test"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_regression(path):
    failures = [f for f in check_cases([Case.from_bytes(path.read_bytes())]) if f.kind != "unsupported"]
    assert not failures, "\n".join(map(str, failures))
