"""Shared by the code generator's tests: compile MLIR text for a target and JIT it."""

from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm


def compile_text(text: str, threads: int = 1, target="host"):
    """(JIT-compiled module or None for a non-host target, LoweringReport, module, context)."""
    context = ir.Context()
    with context:
        module = ir.Module.parse(text)
        report = lower_to_llvm(module, target, threads=threads)
        compiled = jit(module) if get_target(target).is_host else None
    return compiled, report, module, context
