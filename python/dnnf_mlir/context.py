"""The MLIR context every dnnf module works in: the ECG dialect loaded.

Its own module, so that the package's ``__init__`` can re-export it beside the
session without the compiler (which makes contexts) importing the package back.
"""

from ._mlir import ir
from . import ecg


def make_context() -> ir.Context:
    """A new MLIR context with the ECG dialect loaded."""
    context = ir.Context()
    ecg.load(context)
    return context


__all__ = ["make_context"]
