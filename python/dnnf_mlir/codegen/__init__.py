"""CPU code generation: linalg on tensors -> vectorized, tiled, multi-threaded machine code.

    from dnnf_mlir.codegen import lower_to_llvm, jit, emit_llvm_ir, compile_object

    lower_to_llvm(module, target="host", threads=2)   # in place, to the LLVM dialect
    outputs = jit(module)["main"](a, b)                # MLIR ExecutionEngine
    obj = compile_object(emit_llvm_ir(module), target="aarch64")   # llc-22

See ``pipeline.py`` for the pass / transform sequence and ``schedule.py`` for the
per-op transform-dialect schedules.
"""

from .pipeline import (
    CodegenError,
    JitFunction,
    JitModule,
    LoweringReport,
    PIPELINE_STAGES,
    compile_object,
    emit_llvm_ir,
    find_libomp,
    find_llc,
    jit,
    lower_to_llvm,
    signatures,
)
from .target import AARCH64, Target, get_target, host_target

__all__ = [
    "AARCH64",
    "CodegenError",
    "JitFunction",
    "JitModule",
    "LoweringReport",
    "PIPELINE_STAGES",
    "Target",
    "compile_object",
    "emit_llvm_ir",
    "find_libomp",
    "find_llc",
    "get_target",
    "host_target",
    "jit",
    "lower_to_llvm",
    "signatures",
]
