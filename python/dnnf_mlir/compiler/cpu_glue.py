"""The CPU's part of a compiled model's C glue (``c_glue.py`` has the rest).

The generated code's entry point is MLIR's C interface,
``_mlir_ciface_<entry>(inputs..., weights..., outputs...)``, one pointer to a memref
descriptor per argument; ``dnnf_run`` fills the descriptors on its stack (so that it
stays reentrant) and calls it. ``dnnf_load`` first checks that this CPU has every
feature the code was compiled for (``DNNF_CPU_FEATURES``, ``model.h``) and refuses,
naming the missing ones, when it does not: the glue itself is built for the
architecture's baseline, so the check runs on any CPU. ``dnnf_set_num_threads``
sets the most threads a run of a library whose code runs OpenMP uses; each run sizes
its team below that by the machine's load (``team_sizing.py``).
"""

from __future__ import annotations

from ..codegen.cpu import CpuTarget
from ..codegen.cpu.heap_settings import MMAP_THRESHOLD_BYTES, TRIM_THRESHOLD_BYTES
from ..codegen.cpu.features import feature_checks
from . import team_sizing
from .c_glue import GlueParts, ModelInterface, c_string


def cpu_defines(target: CpuTarget) -> list:
    """The macros of ``model.h`` that name the CPU and the features its code may use."""
    return [("DNNF_CPU", c_string(target.cpu_name)), ("DNNF_CPU_FEATURES", c_string(",".join(target.features)))]


def _descriptor(rank: int) -> str:
    dims = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
    return f"typedef struct {{ void *allocated; void *aligned; int64_t offset;{dims} }} memref{rank}_t;"


def _set_descriptor(var: str, pointer: str, shape) -> list:
    lines = [f"  {var}.allocated = {var}.aligned = (void *){pointer};", f"  {var}.offset = 0;"]
    stride = 1
    for axis in reversed(range(len(shape))):
        lines.append(f"  {var}.sizes[{axis}] = {shape[axis]}; {var}.strides[{axis}] = {stride};")
        stride *= shape[axis]
    return lines


def _cpu_check(target: CpuTarget) -> list:
    """C of ``dnnf_missing_cpu_features`` (see ``model.h``) for ``target``'s features."""
    checks = feature_checks(target.arch, target.features)
    lines = ["const char *dnnf_missing_cpu_features(void) {"]
    if not checks:
        return lines + ["  return NULL;", "}", ""]
    if target.arch == "x86_64":
        lines.append("  __builtin_cpu_init();")
    lines += [
        "  const struct { const char *name; int present; } features[] = {",
        *[f"    {{{c_string(feature)}, {present} != 0}}," for feature, present in checks],
        "  };",
        "  static _Thread_local char missing[512];",
        "  missing[0] = 0;",
        "  for (size_t i = 0; i < sizeof features / sizeof features[0]; ++i)",
        "    if (!features[i].present)",
        "      snprintf(missing + strlen(missing), sizeof missing - strlen(missing), \"%s%s\", missing[0] ? \", \" : \"\",",
        "               features[i].name);",
        "  return missing[0] ? missing : NULL;",
        "}",
        "",
    ]
    return lines


# dnnf_load refuses a CPU without the code's features; then keeps the buffers the
# generated code mallocs and frees on every run in the heap.
_LOAD_CHECKS = (
    "  const char *missing = dnnf_missing_cpu_features();",
    "  if (missing) {",
    "    snprintf(error_message, sizeof error_message,",
    '             "this library was compiled for " DNNF_TARGET " (CPU " DNNF_CPU ") and needs %s, which this CPU lacks",',
    "             missing);",
    "    return NULL;",
    "  }",
    "#ifdef __GLIBC__",
    "  /* Keep generated code's per-run buffers in the heap (codegen/cpu/heap_settings.py). */",
    f"  mallopt(M_MMAP_THRESHOLD, {MMAP_THRESHOLD_BYTES});",
    f"  mallopt(M_TRIM_THRESHOLD, {TRIM_THRESHOLD_BYTES});",
    "#endif",
)

_ONE_THREAD = ("int dnnf_set_num_threads(int threads) { (void)threads; return 1; }",)


def cpu_glue_parts(interface: ModelInterface, entry: str, target: CpuTarget, openmp: bool) -> GlueParts:
    """What ``model.c`` adds for code lowered for ``target`` whose entry point is ``entry``
    (its C interface), running OpenMP or not."""
    inputs, weights, outputs = interface.inputs, interface.weights, interface.outputs
    arguments = [s for _, _, s in inputs] + [w.shape for w in weights] + [s for _, _, s in outputs]
    run, calls = [], []
    for index, shape in enumerate(arguments):
        var = f"a{index}"
        run.append(f"  memref{len(shape)}_t {var};")
        if index < len(inputs):
            pointer = f"inputs[{index}]"
        elif index < len(inputs) + len(weights):
            pointer = f"(model->weights + {weights[index - len(inputs)].offset}u)"
        else:
            pointer = f"outputs[{index - len(inputs) - len(weights)}]"
        run += _set_descriptor(var, pointer, shape)
        calls.append(f"&{var}")
    call = f"_mlir_ciface_{entry}({', '.join(calls)});"
    run += [*(team_sizing.run_on_team(call) if openmp else [f"  {call}"]), "  return 0;"]
    return GlueParts(
        includes=("malloc.h", *(["sys/auxv.h"] if target.arch == "aarch64" else []),
                  *(team_sizing.INCLUDES if openmp else ())),
        declarations=(
            *[_descriptor(rank) for rank in sorted({len(shape) for shape in arguments})],
            "",
            f"void _mlir_ciface_{entry}({', '.join(f'memref{len(s)}_t *' for s in arguments) or 'void'});",
            "",
        ),
        definitions=(*_cpu_check(target), *(team_sizing.DEFINITIONS if openmp else ())),
        load_checks=_LOAD_CHECKS,
        load=team_sizing.LOAD if openmp else (),
        run=tuple(run),
        extra=team_sizing.SET_NUM_THREADS if openmp else _ONE_THREAD,
    )


__all__ = ["cpu_defines", "cpu_glue_parts"]
