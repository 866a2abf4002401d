"""CPU code generation: linalg on tensors -> vectorized, tiled, multi-threaded machine code.

    from dnnf_mlir.codegen import lower_to_llvm, jit, emit_llvm_ir, compile_object

    lower_to_llvm(module, target="host", threads=2)   # in place, to the LLVM dialect
    lower_to_llvm(module, get_target("host", cpu="x86-64-v3"))   # for a named CPU
    outputs = jit(module)["main"](a, b)                # MLIR ExecutionEngine
    obj = compile_object(emit_llvm_ir(module), target="aarch64")   # llc-22

``pipeline.py`` drives the stages (any target); ``cpu/`` holds what the CPU
targets add: the rewrites and transform-dialect schedules of each kind of op, the
OpenMP threads, llc and the AArch64 cross builds; ``target.py`` and
``cpu/features.py`` say what a CPU name decides.
"""

from .cpu.features import CpuError, UnsupportedCpuError
from .cpu.objects import compile_object, emit_llvm_ir
from .errors import CodegenError
from .cpu.jit import JitFunction, JitModule, find_libomp, jit
from .lowered_module import signatures
from .pipeline import PIPELINE_STAGES, LoweringReport, lower_to_llvm
from .target import Target, get_target, host_target
from .cpu.toolchain import find_llc

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
