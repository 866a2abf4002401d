"""The OpenCL target's part of a compiled model's C glue (``c_glue.py`` has the frame,
``gpu_glue.py`` the calls every GPU runtime shares).

The model is the OpenCL runtime's (``runtime/opencl/dnnf_opencl.h``): ``model.c`` holds
the program as C tables (buffers, kernels, dispatches, bindings, read from the dispatch
plan) and its OpenCL C source; ``dnnf_cl_load`` builds the program (or loads its cached
binary), creates the buffers and uploads the weights. ``model.h`` adds what every GPU
model has (dispatches, their profiled times, the device's name) and the build's log.
"""

from __future__ import annotations

from ..codegen.gpu.opencl import program_source
from ..codegen.gpu.program import Program
from .c_glue import GlueParts, c_string
from .gpu_glue import DECLARATIONS as GPU_DECLARATIONS
from .gpu_glue import runtime_glue_parts

DECLARATIONS = GPU_DECLARATIONS + (
    "/* The OpenCL compiler's log of the program's build (empty: no warning, or a cached binary). */",
    "const char *dnnf_build_log(const dnnf_model *model);",
    "/* 1 when the program's binary came from the cache of an earlier build. */",
    "int dnnf_program_cached(const dnnf_model *model);",
)

KINDS = {"input": "DNNF_CL_INPUT", "output": "DNNF_CL_OUTPUT", "weight": "DNNF_CL_WEIGHT",
         "scratch": "DNNF_CL_SCRATCH", "constant": "DNNF_CL_CONSTANT"}

_EXTRA = (
    "",
    "const char *dnnf_build_log(const dnnf_model *model) { return dnnf_cl_build_log(model->cl); }",
    "",
    "int dnnf_program_cached(const dnnf_model *model) { return dnnf_cl_from_cache(model->cl); }",
)


def opencl_defines(program: Program, device: str) -> list:
    """The macros of ``model.h`` that describe the OpenCL code."""
    return [("DNNF_CPU_FEATURES", c_string("")), ("DNNF_OPENCL_DEVICE_PROFILE", c_string(device)),
            ("DNNF_KERNELS", str(len(program.kernels))), ("DNNF_DISPATCHES", str(len(program.dispatches)))]


def _bytes_literal(data: bytes) -> str:
    return "(const unsigned char *)\"" + "".join(f"\\x{b:02x}" for b in data) + "\""


def _tables(program: Program) -> list:
    buffers = []
    for b in program.buffers:
        data = _bytes_literal(b.data) if b.data else "NULL"
        buffers.append(f"  {{{b.bytes}u, {KINDS[b.kind]}, {b.index}u, {b.tensor_bytes}u, {data}, {len(b.data)}u}},")
    kernels = [f"  {{{c_string(k.name)}, {k.bindings}, {{{', '.join(map(str, k.workgroup_size))}}}}},"
               for k in program.kernels]
    dispatches, bindings = [], []
    for d in program.dispatches:
        dispatches.append(f"  {{{d.kernel}, {{{', '.join(map(str, d.groups))}}}, {len(bindings)}}},")
        bindings += [f"  {{{b.buffer}, {b.offset}u}}," for b in d.bindings]
    inputs = sum(b.kind == "input" for b in program.buffers)
    outputs = sum(b.kind == "output" for b in program.buffers)

    def table(ctype, name, rows):
        return [f"static const {ctype} {name}[] = {{", *(rows or ["  {0},"]), "};"]

    return [
        *table("dnnf_cl_buffer", "buffers", buffers),
        *table("dnnf_cl_kernel", "kernels", kernels),
        *table("dnnf_cl_dispatch", "dispatches", dispatches),
        *table("dnnf_cl_binding", "bindings", bindings),
        f"static const char source[] = {c_string(program_source(program.kernels))};",
        f"static const dnnf_cl_program program = {{source, buffers, {len(program.buffers)}, kernels, "
        f"{len(program.kernels)}, dispatches, {len(program.dispatches)}, bindings, {inputs}, {outputs}, "
        f"{c_string(' '.join(program.requires))}}};",
    ]


def opencl_glue_parts(program: Program) -> GlueParts:
    """What ``model.c`` adds to run ``program`` on the OpenCL runtime."""
    return runtime_glue_parts("cl", ('#include "dnnf_opencl.h"', "", *_tables(program), ""), "&program", _EXTRA)


__all__ = ["DECLARATIONS", "opencl_defines", "opencl_glue_parts"]
