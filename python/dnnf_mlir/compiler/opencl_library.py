"""The OpenCL artifact writer: a module lowered for OpenCL -> a shared library over the
OpenCL runtime with the C interface of ``c_glue.py``, and a runner.

``plan``: the dispatch plan read from the module (``codegen.gpu.program``), written as
``plan.txt`` beside the program's OpenCL C (``kernels.cl``), for inspection; ``build``:
CMake with ``DNNF_OPENCL=ON`` builds ``libdnnf_model.so`` from the glue (``model.c``:
``c_glue`` + ``opencl_glue``, the plan's tables and the source compiled in) and the
runtime (``dnnf_opencl.c``, linked with the OpenCL ICD loader), and ``dnnf_runner``.
The library loads into this process; it builds its program when it loads.
"""

from __future__ import annotations

from pathlib import Path

from .._mlir import ir
from ..codegen.gpu.opencl import OpenclTarget, program_source
from ..codegen.gpu.program import dispatch_plan
from ..progress import StageTimer
from .artifact_writer import ArtifactWriter
from .c_glue import ModelInterface, header, model_c
from .cmake_build import LIBRARY, RUNNER, RUNTIME_FILES, cmake_build, copy_runtime_files
from .opencl_glue import DECLARATIONS, opencl_defines, opencl_glue_parts

PLAN = "plan.txt"
SOURCE = "kernels.cl"
RUNTIME_SOURCES = ("opencl/dnnf_opencl.c", "opencl/dnnf_opencl.h")


class OpenclLibraryWriter(ArtifactWriter):
    kind = "opencl"

    def write(self, module: ir.Module, directory: Path, interface: ModelInterface, entry: str, target: OpenclTarget,
              timer: StageTimer) -> dict:
        timer.enter("plan", f"the dispatch plan, the OpenCL C program: {PLAN}, {SOURCE}")
        with module.context:
            program = dispatch_plan(module)
        (directory / PLAN).write_text(program.text("opencl"))
        source = program_source(program.kernels)
        (directory / SOURCE).write_text(source)
        timer.enter("build", f"CMake: {LIBRARY}, {RUNNER}")
        defines = opencl_defines(program, target.device.name)
        (directory / "model.h").write_text(header(interface, target, defines, DECLARATIONS))
        (directory / "model.c").write_text(model_c(interface, opencl_glue_parts(program)))
        copy_runtime_files(directory, RUNTIME_FILES + RUNTIME_SOURCES)
        cmake_build(directory, ["-DDNNF_OPENCL=ON"])
        return {
            "device": target.device.name,
            "dispatches": len(program.dispatches),
            "barriers": sum(dispatch.barrier for dispatch in program.dispatches),
            "opencl_kernels": len(program.kernels),
            "opencl_source_bytes": len(source.encode()),
            "library": LIBRARY,
            "runner": RUNNER,
            "emulator": None,
        }


OPENCL_LIBRARY = OpenclLibraryWriter()


__all__ = ["OPENCL_LIBRARY", "OpenclLibraryWriter", "PLAN", "SOURCE"]
