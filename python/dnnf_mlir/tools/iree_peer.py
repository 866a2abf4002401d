"""IREE as dnnf-bench's peer on the same Vulkan device: an ONNX model imported with
``iree-import-onnx``, compiled with ``iree-compile --iree-hal-target-device=vulkan``
for one of IREE's Vulkan targets, and run in this process through ``iree.runtime``
(packages ``iree-base-compiler`` and ``iree-base-runtime``, pinned in tools/setup.sh).

One compilation gives both the program and its dispatch count: the compilation's
phases are dumped (weights elided) and the ``flow.dispatch`` ops of the flow phase are
counted with IREE's own IR API -- the models have no control flow, so each runs once
per inference. Models below opset 17 are upgraded by the importer (``--opset-version
17``): IREE's ONNX lowering does not take, for instance, opset 9's MaxPool.
"""

import importlib
import os
import shutil
import subprocess
import sys
from importlib import metadata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

OPSET = 17
VERSION = "3.13.0"  # of iree-base-compiler and iree-base-runtime, as tools/setup.sh pins them


class IreeError(Exception):
    """IREE could not import, compile or run a model; the message is its first error line."""


@dataclass(frozen=True)
class IreeProgram:
    vmfb: Path
    dispatches: int
    vulkan_target: str


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[0]


def _tool(name: str) -> str:
    """IREE's command ``name``: beside this Python (the virtual environment pip put it
    in, whether or not it is activated), else on PATH."""
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        raise IreeError(f"{name} not found (pip install iree-base-compiler=={VERSION})")
    return found


def _run(command: list, what: str):
    proc = subprocess.run([_tool(command[0])] + [str(c) for c in command[1:]], capture_output=True, text=True)
    if proc.returncode != 0:
        raise IreeError(f"{what}: {_first_error(proc.stderr + proc.stdout)}")


def _import(module: str, package: str):
    """IREE's Python packages are the peer's, not the compiler's: imported when used."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise IreeError(f"{module} not found (pip install {package}=={VERSION})") from None


def installed_version() -> str | None:
    """iree-base-runtime's version here (None when it is missing)."""
    try:
        return metadata.version("iree-base-runtime")
    except metadata.PackageNotFoundError:
        return None


def count_dispatches(flow_ir: Path) -> int:
    """The ``flow.dispatch`` ops of the program at IREE's flow phase."""
    ir = _import("iree.compiler.ir", "iree-base-compiler")

    with ir.Context():
        module = ir.Module.parse(flow_ir.read_text())
        count = 0
        pending = [module.operation]
        while pending:
            op = pending.pop()
            count += op.name == "flow.dispatch"
            pending.extend(inner.operation for region in op.regions for block in region.blocks for inner in block)
        return count


def compile_for_vulkan(model: Path, workdir: Path, vulkan_target: str) -> IreeProgram:
    """``model`` imported and compiled for IREE's Vulkan ``vulkan_target`` in ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    imported, vmfb, phases = workdir / "model.mlir", workdir / "model.vmfb", workdir / "phases"
    _run(["iree-import-onnx", "--opset-version", OPSET, model, "-o", imported], "iree-import-onnx")
    _run(["iree-compile", imported, "--iree-hal-target-device=vulkan", f"--iree-vulkan-target={vulkan_target}",
          f"--dump-compilation-phases-to={phases}", "--mlir-elide-resource-strings-if-larger=16",
          "--mlir-elide-elementsattrs-if-larger=16", "-o", vmfb], "iree-compile")
    imported.unlink()  # the weights, in text: as large again as the model
    (flow,) = phases.glob("*.flow.mlir")
    return IreeProgram(vmfb, count_dispatches(flow), vulkan_target)


class IreeSession:
    """A compiled IREE program loaded on the Vulkan device, in this process."""

    def __init__(self, program: IreeProgram):
        self._rt = rt = _import("iree.runtime", "iree-base-runtime")
        try:
            self.device = rt.get_device("vulkan")
            config = rt.Config(device=self.device)
            module = rt.VmModule.mmap(config.vm_instance, str(program.vmfb))
            self._context = rt.SystemContext(vm_modules=[module], config=config)
        except (RuntimeError, ValueError) as error:
            raise IreeError(f"loading on vulkan: {_first_error(str(error))}") from None
        (entry,) = [name for name in module.function_names if not name.endswith("$async") and not name.startswith("__")]
        self._entry = self._context.modules[module.name][entry]

    def _to_host(self, array) -> np.ndarray:
        """``array``'s contents through a mappable staging buffer: ``DeviceArray.to_host``
        imports the numpy buffer into Vulkan, which lavapipe refuses (it wants 4096-byte
        aligned host pointers)."""
        rt = self._rt
        view = array._buffer_view  # iree.runtime has no public route to the HAL buffer
        staging = self.device.allocator.allocate_buffer(
            memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
            allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED),
            allocation_size=view.get_buffer().byte_length())
        semaphore = self.device.create_semaphore(0)
        self.device.queue_copy(view.get_buffer(), staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                               signal_semaphores=rt.HalFence.create_at(semaphore, 1))
        rt.HalFence.create_at(semaphore, 1).wait()
        dtype = rt.HalElementType.map_to_dtype(view.element_type)
        return np.array(staging.map().asarray(tuple(view.shape), dtype))

    def bind(self, arrays):
        """A zero-argument callable running the model on ``arrays`` and reading its
        results back; its ``outputs`` hold them after a run."""
        def call():
            try:
                results = self._entry(*arrays)
            except (RuntimeError, ValueError) as error:
                raise IreeError(f"running: {_first_error(str(error))}") from None
            call.outputs = [self._to_host(r) for r in (results if isinstance(results, (tuple, list)) else [results])]

        call.outputs = []
        return call


__all__ = ["IreeError", "IreeProgram", "IreeSession", "compile_for_vulkan", "count_dispatches", "installed_version"]
