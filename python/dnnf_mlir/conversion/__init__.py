"""Conversions from the ECG dialect to upstream MLIR dialects, and a JIT to check them.

``convert-ecg-to-linalg`` (the ``ecg_to_linalg`` package: a lowering table filled by
one module per op family, and the pass) lowers ECG to linalg/tensor/arith/math on
tensors; ``jit`` bufferizes such a module, lowers it to LLVM and runs it with MLIR's
ExecutionEngine (a correctness harness, not a performance pipeline).
"""

from .ecg_to_linalg import ConversionError, ConvertECGToLinalgPass, LOWERINGS, convert_ecg_to_linalg

__all__ = ["ConversionError", "ConvertECGToLinalgPass", "LOWERINGS", "convert_ecg_to_linalg"]
