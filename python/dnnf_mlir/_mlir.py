"""The one gateway to the MLIR Python bindings.

The bindings come from the pinned ``torch-mlir`` wheel, which ships upstream MLIR's
Python API under the ``torch_mlir`` package. Every other module imports MLIR from
here, so moving to another carrier of the same bindings is a one-file change.
"""

from torch_mlir import ir, passmanager, rewrite  # noqa: F401
from torch_mlir.dialects import arith, ext, func, irdl  # noqa: F401

from torch_mlir._mlir_libs._mlir import globals as _globals  # noqa: E402

PassManager = passmanager.PassManager
MLIRError = ir.MLIRError

# Where the bindings find the Python module of the ecg dialect (dnnf_mlir.dialects.ecg).
_globals.append_dialect_search_prefix("dnnf_mlir.dialects")

# Code generation dialects and the JIT, imported on first use (``from dnnf_mlir._mlir
# import linalg``): loading linalg's op DSL costs about 0.3 s, which tools that never
# lower should not pay at start-up.
_LAZY = {
    "linalg": "torch_mlir.dialects.linalg",
    "tensor": "torch_mlir.dialects.tensor",
    "scf": "torch_mlir.dialects.scf",
    "math": "torch_mlir.dialects.math",
    "memref": "torch_mlir.dialects.memref",
    "bufferization": "torch_mlir.dialects.bufferization",
    "execution_engine": "torch_mlir.execution_engine",
    "runtime": "torch_mlir.runtime",
    # CPU code generation (dnnf_mlir.codegen): the transform-dialect interpreter and
    # the LLVM dialect's translation to LLVM IR.
    "transform_interpreter": "torch_mlir.dialects.transform.interpreter",
    "llvm": "torch_mlir.dialects.llvm",
    # GPU code generation (dnnf_mlir.codegen.gpu): vectors, and the binaries of gpu.module.
    "vector": "torch_mlir.dialects.vector",
    "gpu": "torch_mlir.dialects.gpu",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
