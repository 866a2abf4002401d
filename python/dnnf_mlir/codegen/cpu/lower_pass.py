"""``dnnf-lower-to-llvm``: ``dnnf-lower`` for CPU targets, whose result is the LLVM
dialect (the pass ``lowering/compile.pipeline`` ends with), and ``lower_to_llvm``, the
same from Python.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower-to-llvm=target=aarch64
    dnnf-opt model.mlir --pass-pipeline='builtin.module(dnnf-lower-to-llvm{target=host cpu=x86-64-v3})'
"""

from __future__ import annotations

from typing import Callable, Optional

from ..._mlir import ir
from ...transforms.registry import described_by_table
from ..lower_pass import ModuleView, TargetPass
from ..pipeline import LoweringReport, lower_for_kind
from ..target import Target
from .target import CpuTarget


def lower_to_llvm(module: ir.Module, target: "str | Target" = "host", threads: int = 1,
                  dump: Optional[Callable[[str, ir.Module], None]] = None) -> LoweringReport:
    """``codegen.lower`` for a CPU ``target``: ``module`` in place to the LLVM dialect."""
    return lower_for_kind(CpuTarget.kind, module, target, threads, dump)


@described_by_table
class LowerToLLVMPass(TargetPass):
    NAME = "dnnf-lower-to-llvm"

    def lower(self, module: ModuleView, target: Target, threads: int):
        lower_to_llvm(module, target, threads)


__all__ = ["LowerToLLVMPass", "lower_to_llvm"]
