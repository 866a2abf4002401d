"""The ECG dialect: ONNX-level ops that know their mapping type and algebra.

``OPS`` maps each mnemonic to its op class; ``load(context)`` makes the dialect
available in an MLIR context (``dnnf_mlir.make_context`` does it for you).
"""

from .._mlir import ir
from . import ops  # noqa: F401  (defines the op classes)
from .base import ECG, OPS, ECGOp, VerificationError
from .properties import Algebra, MappingType
from .tensor_spec import TensorSpec, UnsupportedTypeError, from_mlir, to_mlir


def load(context: ir.Context):
    """Register the ECG dialect in ``context`` (once per context)."""
    with context:
        if not context.is_dialect_loaded(ECG.DIALECT_NAMESPACE):
            ECG.load()


def op_class(mnemonic: str) -> type:
    return OPS[mnemonic]


__all__ = [
    "ECG", "OPS", "ECGOp", "VerificationError", "Algebra", "MappingType", "TensorSpec",
    "UnsupportedTypeError", "from_mlir", "to_mlir", "load", "op_class",
]
