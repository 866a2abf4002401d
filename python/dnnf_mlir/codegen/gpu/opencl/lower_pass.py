"""``dnnf-lower-to-opencl``: ``dnnf-lower`` for the OpenCL target, whose result holds its
kernels as ``gpu.binary`` ops of OpenCL C, and ``lower_to_opencl``, the same from Python.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower-to-opencl
"""

from __future__ import annotations

from typing import Callable, Optional

from ...._mlir import ir
from ....transforms.registry import described_by_table
from ...lower_pass import ModuleView, TargetPass
from ...pipeline import LoweringReport, lower_for_kind
from ...target import Target
from .target import OpenclTarget


def lower_to_opencl(module: ir.Module, target: "str | Target" = "opencl",
                    dump: Optional[Callable[[str, ir.Module], None]] = None) -> LoweringReport:
    """``codegen.lower`` for an OpenCL ``target``: ``module`` in place, its kernels OpenCL C."""
    return lower_for_kind(OpenclTarget.kind, module, target, 1, dump)


@described_by_table
class LowerToOpenclPass(TargetPass):
    NAME = "dnnf-lower-to-opencl"

    def lower(self, module: ModuleView, target: Target, threads: int):
        lower_to_opencl(module, target)


__all__ = ["LowerToOpenclPass", "lower_to_opencl"]
