"""ONNX's official backend node tests on DnnfBackend (importer + reference interpreter).

Only node tests (one model per ONNX operator case, generated in memory: nothing
is downloaded) whose every op the importer covers are collected, CPU only; model
zoo, real, simple and PyTorch-converted cases are not. ``node_cases.py`` decides
coverage and lists the exclusions; ``report.py`` prints the counts.
"""

import re
import unittest

import onnx.backend.test
import pytest

import node_cases
from dnnf_mlir.frontend.onnx_importer import OnnxImportError
from dnnf_mlir.onnx_backend import DnnfBackend

_CASES = node_cases.classify()
_SELECTED = sorted(name for name, (kind, _, _) in _CASES.items() if kind != "uncovered")

backend_test = onnx.backend.test.BackendTest(
    DnnfBackend,
    __name__,
    test_kwargs={name: node_cases.prepare_kwargs(_CASES[name][1]) for name in _SELECTED},
)
backend_test.include("^(?:" + "|".join(re.escape(name) for name in _SELECTED) + ")_cpu$")


def _still_rejected(name: str, reason: str):
    """An excluded case: skipped with its reason while the importer still rejects it."""

    def test(self):
        try:
            node_cases.run_case(_CASES[name][1])
        except OnnxImportError:
            pytest.skip(f"excluded: {reason}")
        pytest.fail(f"{name} is excluded ({reason}) but the importer no longer rejects it: update EXCLUDED")

    return test


def _against_onnxruntime(name: str):
    """A deviation: the case's outputs must match onnxruntime's rather than ONNX's reference."""

    def test(self):
        node_cases.run_case(_CASES[name][1], against_onnxruntime=True)

    return test


def _node_tests() -> dict:
    """The runner's node test class, reduced to the covered CPU cases."""
    source = backend_test.test_cases["OnnxBackendNodeModelTest"]
    tests = type("OnnxBackendNodeModelTest", (unittest.TestCase,), {"__module__": __name__})
    for name in _SELECTED:
        kind, _, reason = _CASES[name]
        if kind == "covered":
            test = getattr(source, f"{name}_cpu")
        elif kind == "deviation":
            test = _against_onnxruntime(name)
        else:
            test = _still_rejected(name, reason)
        setattr(tests, f"{name}_cpu", test)
    return {"OnnxBackendNodeModelTest": tests}


globals().update(_node_tests())
