"""The CPU artifact writer: a module lowered for a CPU -> a shared library with the C
interface of ``c_glue.py``, and a runner.

``llvm``: the LLVM IR through ``opt-22 -O3`` and ``llc-22`` into ``model.o``;
``build``: CMake (with the AArch64 toolchain file when cross-compiling) links
``model.o`` and the glue (``model.c``: ``c_glue`` + ``cpu_glue``) into
``libdnnf_model.so`` and builds ``dnnf_runner``, the runner over raw tensor files of
``runtime/``; a module with kernel timers (``dnnf-instrument-kernels``) gets them in
the glue (``kernel_timer_glue.py``) and its launches in the manifest. A library for
another architecture runs its runner under an emulator (``qemu-aarch64``).
"""

from __future__ import annotations

from pathlib import Path

from .._mlir import ir
from ..codegen.cpu import CpuTarget, compile_object, emit_llvm_ir
from ..codegen.cpu.lowered import USES_OPENMP
from ..kernel_profile.instrument import recorded_launches
from ..progress import StageTimer
from .artifact_writer import ArtifactWriter
from .c_glue import ModelInterface, header, model_c
from .cmake_build import LIBRARY, RUNNER, cmake_build, copy_runtime_files
from .cpu_glue import cpu_defines, cpu_glue_parts
from .errors import CompileError
from .kernel_timer_glue import HEADER_DECLARATIONS, with_kernel_timers

TOOLCHAIN_FILES = {"aarch64": "aarch64-linux-gnu.cmake"}
EMULATORS = {"aarch64": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]}


def _build(directory: Path, target: CpuTarget, openmp: bool):
    options = [f"-DDNNF_OPENMP={'ON' if openmp else 'OFF'}"]
    if not target.is_host:
        if target.name not in TOOLCHAIN_FILES:
            raise CompileError(f"no CMake toolchain file for target {target.name}")
        options.append(f"-DCMAKE_TOOLCHAIN_FILE={directory.resolve() / TOOLCHAIN_FILES[target.name]}")
    cmake_build(directory, options)


class CpuLibraryWriter(ArtifactWriter):
    kind = "cpu"

    def write(self, module: ir.Module, directory: Path, interface: ModelInterface, entry: str, target: CpuTarget,
              timer: StageTimer) -> dict:
        timer.enter("llvm", "LLVM IR -> opt -O3 -> llc: model.o")
        with module.context:
            openmp = USES_OPENMP in module.operation.attributes
            launches = recorded_launches(module.operation)  # a profiled build's (dnnf-instrument-kernels)
            llvm_ir = emit_llvm_ir(module)
        compile_object(llvm_ir, target=target, output=str(directory / "model.o"), pic=True)
        timer.enter("build", f"CMake: {LIBRARY}, {RUNNER}")
        parts = cpu_glue_parts(interface, entry, target, openmp)
        if launches:
            parts = with_kernel_timers(parts, len(launches))
        declarations = HEADER_DECLARATIONS if launches else ()
        (directory / "model.h").write_text(header(interface, target, cpu_defines(target), declarations))
        (directory / "model.c").write_text(model_c(interface, parts))
        copy_runtime_files(directory)
        _build(directory, target, openmp)
        return {
            "triple": target.triple,
            "cpu": target.cpu_name,
            "cpu_requested": target.cpu,
            "cpu_features": list(target.features),
            "openmp": openmp,
            "library": LIBRARY,
            "runner": RUNNER,
            "emulator": None if target.is_host else EMULATORS[target.name],
            **({"kernel_launches": launches} if launches else {}),
        }


CPU_LIBRARY = CpuLibraryWriter()


__all__ = ["CPU_LIBRARY", "CpuLibraryWriter", "EMULATORS"]
