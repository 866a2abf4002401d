"""The backend suite's small real models: the ``simple``, ``pytorch-converted`` and
``pytorch-operator`` sets (shipped in the onnx wheel, nothing is downloaded).

Each case is a directory with ``model.onnx`` and its test data sets; most are PyTorch
exports at opset 6, which the importer upgrades (``frontend.onnx_upgrade``). Every case
runs in ``test_onnx_backend.py`` as ONNX's runner runs it, except the ``EXCLUDED`` ones:
features the project deliberately does not support, which the importer must still
reject with an ``OnnxImportError``. Graph inputs that reach a shape-like operand are
bound to their test values, as for the node cases (``node_cases.constant_inputs``).
"""

import dataclasses
from pathlib import Path

import onnx
from onnx import numpy_helper

import node_cases

# Set -> the category of ONNX's runner ("OnnxBackend<category>ModelTest").
SETS = {"simple": "Simple", "pytorch-converted": "PyTorchConverted", "pytorch-operator": "PyTorchOperator"}

# Pattern (matching a whole case name, without the _cpu suffix) -> why it does not run.
EXCLUDED = {
    r"test_strnorm_model_.*": "StringNormalizer: the string element type is not modelled",
    r"test_sequence_model\d+": "sequence values (SequenceConstruct, SequenceInsert, SplitToSequence, ...) "
    "are not supported (tensors only)",
    r"test_gradient_of_add(_and_mul)?": "training only: the Gradient op (domain ai.onnx.preview.training) is not supported",
}


def _tensors(directory: Path, prefix: str) -> list:
    count = len(list(directory.glob(f"{prefix}_*.pb")))
    return [numpy_helper.to_array(onnx.load_tensor(str(directory / f"{prefix}_{i}.pb"))) for i in range(count)]


def load_cases(kind: str) -> list:
    """The cases of one set, with their model and data sets loaded (as node cases have them)."""
    from onnx.backend.test.loader import load_model_tests

    cases = []
    for case in load_model_tests(kind=kind):
        directory = Path(case.model_dir)
        data_sets = [(_tensors(d, "input"), _tensors(d, "output")) for d in sorted(directory.glob("test_data_set_*"))]
        cases.append(dataclasses.replace(case, model=onnx.load(str(directory / "model.onnx")), data_sets=data_sets))
    return cases


def classify(kind: str) -> dict:
    """The cases of one set: name -> (kind, case, reason), "covered" (reason None) or "excluded"."""
    result = {}
    for case in load_cases(kind):
        reason = node_cases.excluded_reason(case.name, EXCLUDED)
        result[case.name] = ("excluded" if reason else "covered", case, reason)
    return result
