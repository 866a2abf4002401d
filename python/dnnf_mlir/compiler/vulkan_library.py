"""The Vulkan artifact writer: a module lowered for Vulkan -> a shared library over the
Vulkan runtime with the C interface of ``c_glue.py``, and a runner.

``plan``: the dispatch plan read from the module (``codegen.gpu.program``), written as
``plan.txt`` beside each kernel's SPIR-V (``kernels/NNN_name.spv``), for inspection
(``spirv-dis``, ``spirv-val``); ``build``: CMake with ``DNNF_VULKAN=ON`` builds
``libdnnf_model.so`` from the glue (``model.c``: ``c_glue`` + ``vulkan_glue``, the plan
and the SPIR-V compiled in) and the runtime (``dnnf_vulkan.c``, which opens
``libvulkan.so.1`` when the model loads), and ``dnnf_runner``. The library loads into
this process; it finds its device when it loads.
"""

from __future__ import annotations

from pathlib import Path

from .._mlir import ir
from ..codegen.gpu.program import dispatch_plan
from ..codegen.gpu.vulkan import VulkanTarget
from ..progress import StageTimer
from .artifact_writer import ArtifactWriter
from .c_glue import ModelInterface, header, model_c
from .cmake_build import LIBRARY, RUNNER, RUNTIME_FILES, cmake_build, copy_runtime_files
from .vulkan_glue import DECLARATIONS, vulkan_defines, vulkan_glue_parts

PLAN = "plan.txt"
KERNELS = "kernels"  # the directory of the SPIR-V binaries
RUNTIME_SOURCES = ("vulkan/dnnf_vulkan.c", "vulkan/dnnf_vulkan.h")


class VulkanLibraryWriter(ArtifactWriter):
    kind = "vulkan"

    def write(self, module: ir.Module, directory: Path, interface: ModelInterface, entry: str, target: VulkanTarget,
              timer: StageTimer) -> dict:
        timer.enter("plan", f"the dispatch plan, the SPIR-V kernels: {PLAN}, {KERNELS}/")
        with module.context:
            program = dispatch_plan(module)
        (directory / PLAN).write_text(program.text())
        (directory / KERNELS).mkdir()
        for index, kernel in enumerate(program.kernels):
            (directory / KERNELS / f"{index:03d}_{kernel.name}.spv").write_bytes(kernel.code)
        timer.enter("build", f"CMake: {LIBRARY}, {RUNNER}")
        defines = vulkan_defines(program, target.device.name)
        (directory / "model.h").write_text(header(interface, target, defines, DECLARATIONS))
        (directory / "model.c").write_text(model_c(interface, vulkan_glue_parts(program)))
        copy_runtime_files(directory, RUNTIME_FILES + RUNTIME_SOURCES)
        cmake_build(directory, ["-DDNNF_VULKAN=ON"])
        return {
            "device": target.device.name,
            "dispatches": len(program.dispatches),
            "barriers": sum(dispatch.barrier for dispatch in program.dispatches),
            "spirv_kernels": len(program.kernels),
            "spirv_bytes": sum(len(kernel.code) for kernel in program.kernels),
            "requires": program.requires,
            "library": LIBRARY,
            "runner": RUNNER,
            "emulator": None,
        }


VULKAN_LIBRARY = VulkanLibraryWriter()


__all__ = ["KERNELS", "PLAN", "VULKAN_LIBRARY", "VulkanLibraryWriter"]
