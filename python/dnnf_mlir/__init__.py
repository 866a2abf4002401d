"""dnnf-mlir: an MLIR compiler for ONNX models built around DNNFusion's mapping types."""

from ._mlir import ir
from . import ecg


def make_context() -> ir.Context:
    """A new MLIR context with the ECG dialect loaded."""
    context = ir.Context()
    ecg.load(context)
    return context
