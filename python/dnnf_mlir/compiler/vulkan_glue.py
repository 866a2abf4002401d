"""The Vulkan target's part of a compiled model's C glue (``c_glue.py`` has the rest).

The model is the Vulkan runtime's (``runtime/vulkan/dnnf_vulkan.h``): ``model.c`` holds
its dispatch plan and its kernels' SPIR-V, ``dnnf_load`` maps the weights file (the
frame's checks), hands it to ``dnnf_vk_load``, which creates the device, its buffers and
pipelines and uploads the weights, then unmaps it; ``dnnf_run`` is ``dnnf_vk_run``
(serialized inside, so reentrant). The code needs no CPU feature, so
``dnnf_missing_cpu_features`` is always NULL; it runs no thread of its own.
``model.h`` adds the per-dispatch GPU times of the last run (timestamp queries) and the
device's name.
"""

from __future__ import annotations

from ..codegen.gpu.program import Program
from .c_glue import GlueParts, c_string

# model.h: what a Vulkan model adds to every target's C interface.
DECLARATIONS = (
    "",
    "/* The dispatches of a run, in order (DNNF_DISPATCHES), each one's kernel, and the GPU",
    "   milliseconds each took in the last run: the number written, 0 before the first run,",
    "   -1 when the device has no compute timestamps. */",
    "int dnnf_dispatch_count(const dnnf_model *model);",
    "const char *dnnf_dispatch_name(const dnnf_model *model, int dispatch);",
    "int dnnf_dispatch_times(const dnnf_model *model, double *ms, int capacity);",
    "/* The Vulkan device the model runs on. */",
    "const char *dnnf_device_name(const dnnf_model *model);",
)

_DEFINITIONS = (
    "const char *dnnf_missing_cpu_features(void) { return NULL; }",
    "",
)

_LOAD = (
    "  int status = dnnf_vk_load(plan, kernels, DNNF_KERNELS, model->weights, model->bytes, &model->vk, error_message,",
    "                            sizeof error_message);",
    "  if (status != DNNF_VK_OK) {",
    "    dnnf_free(model);",
    "    return NULL;",
    "  }",
    "  if (model->bytes) munmap(model->weights, model->bytes); /* on the device now */",
    "  model->bytes = 0;",
)

_EXTRA = (
    "int dnnf_set_num_threads(int threads) { (void)threads; return 1; }",
    "",
    "int dnnf_dispatch_count(const dnnf_model *model) { return dnnf_vk_dispatch_count(model->vk); }",
    "",
    "const char *dnnf_dispatch_name(const dnnf_model *model, int dispatch) {",
    "  return dnnf_vk_dispatch_name(model->vk, dispatch);",
    "}",
    "",
    "int dnnf_dispatch_times(const dnnf_model *model, double *ms, int capacity) {",
    "  return dnnf_vk_dispatch_times(model->vk, ms, capacity);",
    "}",
    "",
    "const char *dnnf_device_name(const dnnf_model *model) { return dnnf_vk_device_name(model->vk); }",
)


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
    return GlueParts(
        declarations=(
            '#include "dnnf_vulkan.h"',
            "",
            f"static const char plan[] = {c_string(program.text())};",
            "",
            *kernels,
            f"static const dnnf_vk_spirv kernels[DNNF_KERNELS] = {{{table}}};",
            "",
        ),
        definitions=_DEFINITIONS,
        fields=("dnnf_vk_model *vk;",),
        load=_LOAD,
        free=("  dnnf_vk_free(model->vk);",),
        run=("  return dnnf_vk_run(model->vk, inputs, outputs, error_message, sizeof error_message);",),
        extra=_EXTRA,
    )


__all__ = ["DECLARATIONS", "vulkan_defines", "vulkan_glue_parts"]
