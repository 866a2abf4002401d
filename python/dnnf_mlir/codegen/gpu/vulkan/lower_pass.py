"""``dnnf-lower-to-spirv``: ``dnnf-lower`` for the Vulkan target, whose result holds its
kernels as ``gpu.binary`` ops of SPIR-V, and ``lower_to_spirv``, the same from Python.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower-to-spirv
    dnnf-opt model.mlir --pass-pipeline='builtin.module(dnnf-lower-to-spirv{target=vulkan device=generic})'
"""

from __future__ import annotations

from typing import Callable, Optional

from ...._mlir import ir
from ....transforms.registry import described_by_table
from ...lower_pass import ModuleView, TargetPass
from ...pipeline import LoweringReport, lower_for_kind
from ...target import Target
from .target import VulkanTarget


def lower_to_spirv(module: ir.Module, target: "str | Target" = "vulkan",
                   dump: Optional[Callable[[str, ir.Module], None]] = None) -> LoweringReport:
    """``codegen.lower`` for a Vulkan ``target``: ``module`` in place, its kernels SPIR-V."""
    return lower_for_kind(VulkanTarget.kind, module, target, 1, dump)


@described_by_table
class LowerToSpirvPass(TargetPass):
    NAME = "dnnf-lower-to-spirv"

    def lower(self, module: ModuleView, target: Target, threads: int):
        lower_to_spirv(module, target)


__all__ = ["LowerToSpirvPass", "lower_to_spirv"]
