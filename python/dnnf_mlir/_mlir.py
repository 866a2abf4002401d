"""The one gateway to the MLIR Python bindings.

The bindings come from the pinned ``torch-mlir`` wheel, which ships upstream MLIR's
Python API under the ``torch_mlir`` package. Every other module imports MLIR from
here, so moving to another carrier of the same bindings is a one-file change.
"""

from torch_mlir import ir, passmanager, rewrite  # noqa: F401
from torch_mlir.dialects import arith, ext, func, irdl  # noqa: F401

PassManager = passmanager.PassManager
MLIRError = ir.MLIRError
