"""Building an artifact directory with the CMake project of ``runtime/CMakeLists.txt``
(its library and ``dnnf_runner``), whatever the target."""

from __future__ import annotations

import shutil
import subprocess
from importlib import resources
from pathlib import Path

from .errors import CompileError

LIBRARY = "libdnnf_model.so"
RUNNER = "dnnf_runner"
RUNTIME_FILES = ("CMakeLists.txt", "dnnf_runner.c", "aarch64-linux-gnu.cmake")


def copy_runtime_files(directory: Path, files=RUNTIME_FILES):
    """Copy ``files`` of the package's ``runtime/`` (paths below it) flat into ``directory``."""
    runtime = resources.files("dnnf_mlir") / "runtime"
    for file in files:
        (directory / Path(file).name).write_text((runtime / file).read_text())


def cmake_build(directory: Path, options: list):
    """CMake configure (with ``options``, ``-DNAME=VALUE``) + build in
    ``directory/build``; the library and the runner move up to ``directory``."""
    directory = directory.resolve()  # CMake resolves a relative toolchain path against the build dir
    cmake = shutil.which("cmake")
    if cmake is None:
        raise CompileError("cmake not found (package cmake)")
    command = [cmake, "-S", str(directory), "-B", str(directory / "build"), *options]
    for step in (command, [cmake, "--build", str(directory / "build"), "-j", "2"]):
        proc = subprocess.run(step, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"{' '.join(step[:2])} failed:\n{(proc.stdout + proc.stderr).strip()[-3000:]}")
    for product in (LIBRARY, RUNNER):
        shutil.move(str(directory / "build" / product), str(directory / product))
    shutil.rmtree(directory / "build")


__all__ = ["LIBRARY", "RUNNER", "RUNTIME_FILES", "cmake_build", "copy_runtime_files"]
