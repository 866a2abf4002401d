"""Shared by the code generator's tests: compile MLIR text for a target and JIT it."""

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.transforms.pipeline import build_pass_manager


def compile_text(text: str, threads: int = 1, target="host"):
    """(JIT-compiled module or None for a non-host target, LoweringReport, module, context)."""
    context = ir.Context()
    with context:
        module = ir.Module.parse(text)
        report = lower_to_llvm(module, target, threads=threads)
        compiled = jit(module) if get_target(target).is_host else None
    return compiled, report, module, context


def compile_onnx(model, feeds, cpu, threads):
    """(output, the kernels' schedules) of the ONNX ``model`` of one output compiled
    for the host pinned to ``cpu`` (None: the host's) and run on ``feeds``."""
    context = dnnf_mlir.make_context()
    with context:
        module = import_onnx(model, context=context)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        report = lower_to_llvm(module, get_target("host", cpu), threads=threads)
        (got,) = jit(module, threads=threads)["main"](*feeds.values())
    return got, report.schedules
