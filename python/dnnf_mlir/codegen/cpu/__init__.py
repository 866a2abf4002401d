"""The CPU backend: x86-64 and AArch64 through LLVM (``backend.py`` drives its steps).

    from dnnf_mlir.codegen.cpu import lower_to_llvm, jit, emit_llvm_ir, compile_object

    lower_to_llvm(module, "host", threads=2)            # in place, to the LLVM dialect
    outputs = jit(module)["main"](a, b)                # MLIR ExecutionEngine
    obj = compile_object(emit_llvm_ir(module), target="aarch64")   # opt-22 + llc-22

Its modules: ``target.py`` (``CpuTarget``: architecture + CPU -> vector shape),
``features.py`` (CPU names -> features, the load-time check), ``prepare.py`` (rewrites
into the kernels' shapes: ``convolutions.py``, ``matvec.py``, ``windows.py``,
``epilogues.py``), ``planner.py`` (dispatch by op kind) with the schedules
``matmul.py``, ``matvec.py``, ``conv.py``, ``rows.py``, ``row_fusion.py`` sized by
``tiles.py``, the head loop of attention blocks (``attention.py``) and the
accumulators hoisted by ``cpu_planner.py``; ``buffers.py`` (after bufferization;
``strided_reads.py``: stride-2 rows read contiguously, their even lanes shuffled out;
``scalar_broadcasts.py``: a read of one element broadcast over its lanes loaded once),
``openmp.py`` (threads), ``split.py`` (big functions into pieces), ``lowered.py``
(the LLVM attributes of a lowered module); ``objects.py`` (opt + llc), ``jit.py``
(run in this process), ``cross.py`` (AArch64 executables under qemu),
``toolchain.py`` (where the LLVM 22 tools are), ``lower_pass.py``
(``dnnf-lower-to-llvm``), ``panels_pass.py`` (``dnnf-channel-panels``:
convolutions over few positions as ``X_col^T W^T``, vectors along the output channels,
before the weights leave the code),
``bench.py`` (kernels against numpy and onnxruntime).

Importing the package registers the backend and its target names (``host``,
``native``, ``aarch64``, ``arm64``) with ``codegen.target``.
"""

from ..target import register_backend
from .backend import CPU_BACKEND
from .features import CpuError, UnsupportedCpuError
from .jit import JitFunction, JitModule, find_libomp, jit
from .lower_pass import lower_to_llvm
from .objects import compile_object, emit_llvm_ir
from .target import ALIASES, RESOLVERS, CpuTarget, host_target
from .toolchain import find_llc

register_backend(CPU_BACKEND, RESOLVERS, ALIASES)

__all__ = [
    "CPU_BACKEND",
    "CpuError",
    "CpuTarget",
    "JitFunction",
    "JitModule",
    "UnsupportedCpuError",
    "compile_object",
    "emit_llvm_ir",
    "find_libomp",
    "find_llc",
    "host_target",
    "jit",
    "lower_to_llvm",
]
