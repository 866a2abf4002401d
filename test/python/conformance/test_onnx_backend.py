"""ONNX's official backend tests on DnnfBackend (importer + reference interpreter), CPU only.

The node tests (one model per ONNX operator case, generated in memory) whose every op
the importer covers; ``node_cases.py`` decides coverage and lists their exclusions.
The small real models of the ``simple``, ``pytorch-converted`` and ``pytorch-operator``
sets, every one of them; ``model_cases.py`` lists their exclusions. The ``real`` set
(model zoo downloads) is not run. ``report.py`` prints the counts.
"""

import re
import unittest

import onnx.backend.test
import pytest

import model_cases
import node_cases
from dnnf_mlir.frontend.onnx_importer import OnnxImportError
from dnnf_mlir.onnx_backend import DnnfBackend

# The runner's category ("OnnxBackend<category>ModelTest") -> its selected cases: name -> (kind, case, detail).
_CATEGORIES = {
    "Node": {name: c for name, c in node_cases.classify().items() if c[0] != "uncovered"},
    **{category: model_cases.classify(kind) for kind, category in model_cases.SETS.items()},
}
_SELECTED = {name: c[1] for cases in _CATEGORIES.values() for name, c in cases.items()}

backend_test = onnx.backend.test.BackendTest(
    DnnfBackend,
    __name__,
    test_kwargs={name: node_cases.prepare_kwargs(case) for name, case in _SELECTED.items()},
)
backend_test.include("^(?:" + "|".join(re.escape(name) for name in sorted(_SELECTED)) + ")_cpu$")


def _still_rejected(name: str, case, reason: str):
    """An excluded case: skipped with its reason while the importer still rejects it."""

    def test(self):
        try:
            node_cases.run_case(case)
        except OnnxImportError:
            pytest.skip(f"excluded: {reason}")
        pytest.fail(f"{name} is excluded ({reason}) but the importer no longer rejects it: update EXCLUDED")

    return test


def _checked_by_run_case(case, against_onnxruntime: bool):
    """A deviation (the case's outputs must match onnxruntime's rather than ONNX's reference) or
    a case with a looser absolute tolerance (``LOOSER_ATOL``)."""

    def test(self):
        node_cases.run_case(case, against_onnxruntime=against_onnxruntime)

    return test


def _tests(category: str, cases: dict) -> type:
    """The runner's test class of ``category``, reduced to ``cases`` on the CPU."""
    source = backend_test.test_cases[f"OnnxBackend{category}ModelTest"]
    tests = type(f"OnnxBackend{category}ModelTest", (unittest.TestCase,), {"__module__": __name__})
    for name, (kind, case, reason) in sorted(cases.items()):
        if kind == "covered":
            test = getattr(source, f"{name}_cpu")
        elif kind in ("deviation", "looser"):
            test = _checked_by_run_case(case, against_onnxruntime=kind == "deviation")
        else:
            test = _still_rejected(name, case, reason)
        setattr(tests, f"{name}_cpu", test)
    return tests


globals().update({f"OnnxBackend{c}ModelTest": _tests(c, cases) for c, cases in _CATEGORIES.items()})
