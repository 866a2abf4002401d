"""The Vulkan backend: the GPU steps (``codegen/gpu/backend.py``), then SPIR-V.

Step ``emit``, stage ``spirv``: the launches held to the device profile's bindings
(``device.check_bindings``), then every ``gpu.module`` replaced by a ``gpu.binary`` of
SPIR-V that ``spirv-val`` accepted (``spirv.to_spirv_binary``). The emitted module is
all the runtime needs: ``program.dispatch_plan`` reads the plan from it.

Its output formats: ``plan``, the dispatch plan the runtime loads
(``runtime/vulkan/dnnf_vulkan.h``), and ``spirv-asm``, every kernel's SPIR-V
disassembled (``spirv-dis``).
"""

from __future__ import annotations

from ...._mlir import ir
from ...backend import Stages
from ..backend import GpuBackend
from ..device import check_bindings, emit_binaries
from ..program import dispatch_plan
from .spirv import disassemble, find_spirv_tool, to_spirv_binary
from .target import VulkanTarget


class VulkanBackend(GpuBackend):
    kind = "vulkan"
    stages = GpuBackend.GPU_STAGES + ("spirv",)
    lowering_pass = "dnnf-lower-to-spirv"
    output_formats = {"plan": "the Vulkan runtime's dispatch plan", "spirv-asm": "the kernels' SPIR-V (spirv-dis)"}

    def tools(self) -> list:
        return [find_spirv_tool("spirv-val")]

    def emit(self, module: ir.Module, target: VulkanTarget, threads: int, stages: Stages) -> None:
        with stages.stage("spirv", module):
            check_bindings(module, target.device.max_storage_buffers, target.device.max_storage_buffer_range)
            emit_binaries(module, to_spirv_binary, target.device.vec4_as_words64)

    def translate(self, module: ir.Module, target: VulkanTarget, output_format: str) -> str:
        program = dispatch_plan(module)
        if output_format == "plan":
            return program.text()
        return "".join(f"; kernel {index}: {kernel.name}\n{disassemble(kernel.code)}"
                       for index, kernel in enumerate(program.kernels))


VULKAN_BACKEND = VulkanBackend()


__all__ = ["VULKAN_BACKEND", "VulkanBackend"]
