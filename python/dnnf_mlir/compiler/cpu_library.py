"""The CPU artifact writer: a module lowered for a CPU -> a shared library with the C
interface of ``c_glue.py``, and a runner.

``llvm``: the LLVM IR through ``opt-22 -O3`` and ``llc-22`` into ``model.o``;
``build``: CMake (with the AArch64 toolchain file when cross-compiling) links
``model.o`` and the glue (``model.c``: ``c_glue`` + ``cpu_glue``) into
``libdnnf_model.so`` and builds ``dnnf_runner``, the runner over raw tensor files of
``runtime/``. A library for another architecture runs its runner under an emulator
(``qemu-aarch64``).
"""

from __future__ import annotations

import shutil
import subprocess
from importlib import resources
from pathlib import Path

from .._mlir import ir
from ..codegen.cpu import CpuTarget, compile_object, emit_llvm_ir
from ..codegen.cpu.lowered import USES_OPENMP
from ..progress import StageTimer
from .artifact_writer import ArtifactWriter
from .c_glue import ModelInterface, header, model_c
from .cpu_glue import cpu_defines, cpu_glue_parts
from .errors import CompileError

LIBRARY = "libdnnf_model.so"
RUNNER = "dnnf_runner"
RUNTIME_FILES = ("CMakeLists.txt", "dnnf_runner.c", "aarch64-linux-gnu.cmake")
TOOLCHAIN_FILES = {"aarch64": "aarch64-linux-gnu.cmake"}
EMULATORS = {"aarch64": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]}


def _build(directory: Path, target: CpuTarget, openmp: bool):
    """CMake configure + build in ``directory/build``; the products move up to ``directory``."""
    directory = directory.resolve()  # CMake resolves a relative toolchain path against the build dir
    cmake = shutil.which("cmake")
    if cmake is None:
        raise CompileError("cmake not found (package cmake)")
    command = [cmake, "-S", str(directory), "-B", str(directory / "build"), f"-DDNNF_OPENMP={'ON' if openmp else 'OFF'}"]
    if not target.is_host:
        if target.name not in TOOLCHAIN_FILES:
            raise CompileError(f"no CMake toolchain file for target {target.name}")
        command.append(f"-DCMAKE_TOOLCHAIN_FILE={directory / TOOLCHAIN_FILES[target.name]}")
    for step in (command, [cmake, "--build", str(directory / "build"), "-j", "2"]):
        proc = subprocess.run(step, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"{' '.join(step[:2])} failed:\n{(proc.stdout + proc.stderr).strip()[-3000:]}")
    for product in (LIBRARY, RUNNER):
        shutil.move(str(directory / "build" / product), str(directory / product))
    shutil.rmtree(directory / "build")


class CpuLibraryWriter(ArtifactWriter):
    kind = "cpu"

    def write(self, module: ir.Module, directory: Path, interface: ModelInterface, entry: str, target: CpuTarget,
              timer: StageTimer) -> dict:
        timer.enter("llvm", "LLVM IR -> opt -O3 -> llc: model.o")
        with module.context:
            openmp = USES_OPENMP in module.operation.attributes
            llvm_ir = emit_llvm_ir(module)
        compile_object(llvm_ir, target=target, output=str(directory / "model.o"), pic=True)
        timer.enter("build", f"CMake: {LIBRARY}, {RUNNER}")
        (directory / "model.h").write_text(header(interface, target, cpu_defines(target)))
        (directory / "model.c").write_text(model_c(interface, cpu_glue_parts(interface, entry, target, openmp)))
        runtime = resources.files("dnnf_mlir") / "runtime"
        for file in RUNTIME_FILES:
            (directory / file).write_text((runtime / file).read_text())
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
        }


CPU_LIBRARY = CpuLibraryWriter()


__all__ = ["CPU_LIBRARY", "CpuLibraryWriter", "EMULATORS", "LIBRARY", "RUNNER"]
