"""CPU code generation: linalg on tensors -> vectorized, tiled, multi-threaded machine code.

    from dnnf_mlir.codegen import lower_to_llvm, jit, emit_llvm_ir, compile_object

    lower_to_llvm(module, target="host", threads=2)   # in place, to the LLVM dialect
    lower_to_llvm(module, get_target("host", cpu="x86-64-v3"))   # for a named CPU
    outputs = jit(module)["main"](a, b)                # MLIR ExecutionEngine
    obj = compile_object(emit_llvm_ir(module), target="aarch64")   # llc-22

See ``pipeline.py`` for the pass / transform sequence, ``schedule.py`` for the
per-op transform-dialect schedules and ``target.py`` / ``cpu.py`` for what a CPU
name decides.
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
    jit,
    lower_to_llvm,
    signatures,
)
from .cpu import CpuError, UnsupportedCpuError
from .target import Target, get_target, host_target
from .toolchain import find_llc

__all__ = [
    "CodegenError",
    "CpuError",
    "JitFunction",
    "JitModule",
    "LoweringReport",
    "PIPELINE_STAGES",
    "Target",
    "UnsupportedCpuError",
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
