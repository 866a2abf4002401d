"""The Vulkan target's part of a compiled model's C glue (``c_glue.py`` has the frame,
``gpu_glue.py`` the calls every GPU runtime shares).

The model is the Vulkan runtime's (``runtime/vulkan/dnnf_vulkan.h``): ``model.c`` holds
its dispatch plan and its kernels' SPIR-V; ``dnnf_vk_load`` creates the device, its
buffers and pipelines and uploads the weights. ``model.h`` adds the per-dispatch GPU
times of the last run (timestamp queries) and the device's name.
"""

from __future__ import annotations

from ..codegen.gpu.program import Program
from .c_glue import GlueParts, c_string
from .gpu_glue import DECLARATIONS, runtime_glue_parts


def vulkan_defines(program: Program, device: str) -> list:
    """The macros of ``model.h`` that describe the Vulkan code."""
    return [("DNNF_CPU_FEATURES", c_string("")), ("DNNF_VULKAN_DEVICE_PROFILE", c_string(device)),
            ("DNNF_KERNELS", str(len(program.kernels))), ("DNNF_DISPATCHES", str(len(program.dispatches)))]


def _words(binary: bytes) -> str:
    words = [int.from_bytes(binary[i:i + 4], "little") for i in range(0, len(binary), 4)]
    rows = [", ".join(f"0x{w:08x}u" for w in words[i:i + 8]) for i in range(0, len(words), 8)]
    return ",\n  ".join(rows)


def vulkan_glue_parts(program: Program) -> GlueParts:
    """What ``model.c`` adds to run ``program`` on the Vulkan runtime."""
    kernels = []
    for index, kernel in enumerate(program.kernels):
        kernels += [f"/* {kernel.name} */", f"static const uint32_t kernel{index}[] = {{", f"  {_words(kernel.code)}",
                    "};"]
    table = ", ".join(f"{{kernel{i}, sizeof kernel{i} / 4}}" for i in range(len(program.kernels)))
    declarations = (
        '#include "dnnf_vulkan.h"',
        "",
        f"static const char plan[] = {c_string(program.text())};",
        "",
        *kernels,
        f"static const dnnf_vk_spirv kernels[DNNF_KERNELS] = {{{table}}};",
        "",
    )
    return runtime_glue_parts("vk", declarations, "plan, kernels, DNNF_KERNELS")


__all__ = ["DECLARATIONS", "vulkan_defines", "vulkan_glue_parts"]
