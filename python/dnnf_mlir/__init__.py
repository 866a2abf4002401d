"""dnnf-mlir: an MLIR compiler for ONNX models built around DNNFusion's mapping types.

``dnnf_mlir.InferenceSession`` runs a model as onnxruntime's does (compiled on first
use, kept in the compile cache); ``make_context`` gives an MLIR context with the ECG
dialect for working on the IR.
"""

from .context import make_context


def __getattr__(name: str):
    # The session is imported on first use: it brings the code generator along, which
    # a tool such as dnnf-opt should not pay for at start-up.
    if name == "InferenceSession":
        from .session import InferenceSession

        return InferenceSession
    raise AttributeError(f"module 'dnnf_mlir' has no attribute '{name}'")


__all__ = ["InferenceSession", "make_context"]
