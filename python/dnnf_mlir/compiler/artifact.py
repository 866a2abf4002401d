"""Running a directory made by ``compile_model``.

``Artifact(outdir)`` reads its manifest. ``run(inputs)`` executes the model:

* a library that runs here is loaded into this process with ctypes
  (``HostSession``: load once, call many times, as the benchmark does), through the
  C interface every target's has (``c_glue.py``);
* one for another machine runs ``dnnf_runner`` -- the C driver linked against the
  target's ``libdnnf_model.so`` -- under the emulator its manifest names
  (``qemu-aarch64``), passing the tensors through raw files; this is the real
  AArch64 code behind its C entry point.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from ..codegen.cpu import UnsupportedCpuError
from .driver import MANIFEST, MANIFEST_FORMAT


class ArtifactError(Exception):
    """A directory that is not a usable compiled model, or a failed run."""


class InvalidInput(ArtifactError):
    """Inputs the compiled model refused (``DNNF_INVALID_ARGUMENT``): an index out of
    range, a buffer of the wrong size."""


INVALID_ARGUMENT = 2  # model.h's DNNF_INVALID_ARGUMENT, and dnnf_runner's exit status for it


class Artifact:
    def __init__(self, outdir: "str | os.PathLike"):
        self.path = Path(outdir)
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ArtifactError(f"{self.path} is not a directory made by dnnf-compile ({e})") from None
        m = self.manifest
        if m.get("format") != MANIFEST_FORMAT:
            raise ArtifactError(f"{self.path} was made by another version of dnnf-compile (manifest format "
                                f"{m.get('format')}, not {MANIFEST_FORMAT}); compile it again")
        self.inputs = [(t["name"], np.dtype(t["dtype"]), tuple(t["shape"])) for t in m["inputs"]]
        self.outputs = [(t["name"], np.dtype(t["dtype"]), tuple(t["shape"])) for t in m["outputs"]]

    @property
    def target(self) -> str:
        return self.manifest["target"]

    @property
    def precision(self) -> str:
        """What its tensors are stored in (``--precision``): fp32, or fp16 on a GPU target."""
        return self.manifest.get("precision", "fp32")

    @property
    def emulator(self) -> list | None:
        """The command that runs the runner on this machine; None when the library runs here."""
        return self.manifest["emulator"]

    @property
    def is_host(self) -> bool:
        return self.emulator is None

    def check_inputs(self, arrays: Sequence[np.ndarray]) -> list:
        if len(arrays) != len(self.inputs):
            raise ArtifactError(f"the model takes {len(self.inputs)} inputs, got {len(arrays)}")
        checked = []
        for (name, dtype, shape), array in zip(self.inputs, arrays):
            array = np.asarray(array, order="C")  # not ascontiguousarray, which makes a scalar [1]
            if array.dtype != dtype or array.shape != shape:
                raise ArtifactError(f"input {name} must be {dtype}{list(shape)}, got {array.dtype}{list(array.shape)}")
            checked.append(array)
        return checked

    def session(self, threads: int | None = None) -> "HostSession":
        """The library loaded into this process (``UnsupportedCpuError`` when this CPU
        lacks a feature it was compiled for)."""
        if not self.is_host:
            raise ArtifactError(f"a library for {self.target} cannot be loaded into this process; use run()")
        return HostSession(self, threads)

    def run(self, arrays: Sequence[np.ndarray], repeat: int = 0, threads: int | None = None):
        """Outputs of one run, and the milliseconds of each of ``repeat`` further runs."""
        if self.is_host:
            return self.session(threads).run_timed(arrays, repeat)
        return self._run_emulated(arrays, repeat, threads)

    def _run_emulated(self, arrays, repeat: int, threads: int | None):
        emulator = self.emulator
        if shutil.which(emulator[0]) is None:
            raise ArtifactError(f"{emulator[0]} not found (package qemu-user)")
        arrays = self.check_inputs(arrays)
        with tempfile.TemporaryDirectory(prefix="dnnf-run-") as scratch:
            in_files = [os.path.join(scratch, f"in{i}.bin") for i in range(len(arrays))]
            out_files = [os.path.join(scratch, f"out{j}.bin") for j in range(len(self.outputs))]
            for path, array in zip(in_files, arrays):
                array.tofile(path)
            command = emulator + [str(self.path / self.manifest["runner"]), str(self.path / "weights.bin")]
            command += in_files + out_files + [str(repeat), str(threads or 1)]
            proc = subprocess.run(command, capture_output=True, text=True)
            if proc.returncode != 0:
                error = InvalidInput if proc.returncode == INVALID_ARGUMENT else ArtifactError
                raise error(f"{' '.join(emulator[:1])} {self.manifest['runner']} failed: {proc.stderr.strip()}")
            outputs = [np.fromfile(p, dtype).reshape(shape) for p, (_, dtype, shape) in zip(out_files, self.outputs)]
        times = [float(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("run-ms ")]
        return outputs, times


def _milliseconds(call) -> float:
    start = time.perf_counter()
    call()
    return 1e3 * (time.perf_counter() - start)


class HostSession:
    """The host library loaded into this process, its weights mapped once."""

    def __init__(self, artifact: Artifact, threads: int | None = None):
        self.artifact = artifact
        lib = ctypes.CDLL(str(artifact.path / artifact.manifest["library"]))
        lib.dnnf_load.restype = ctypes.c_void_p
        lib.dnnf_load.argtypes = [ctypes.c_char_p]
        lib.dnnf_run_sized.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4
        lib.dnnf_free.argtypes = [ctypes.c_void_p]
        lib.dnnf_error.restype = ctypes.c_char_p
        lib.dnnf_missing_cpu_features.restype = ctypes.c_char_p
        if hasattr(lib, "dnnf_dispatch_times"):  # a GPU model's (vulkan_glue.py)
            lib.dnnf_dispatch_count.argtypes = [ctypes.c_void_p]
            lib.dnnf_dispatch_name.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.dnnf_dispatch_name.restype = ctypes.c_char_p
            lib.dnnf_dispatch_times.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.c_int]
            lib.dnnf_device_name.argtypes = [ctypes.c_void_p]
            lib.dnnf_device_name.restype = ctypes.c_char_p
        self._lib = lib
        missing = lib.dnnf_missing_cpu_features()
        if missing:
            m = artifact.manifest
            raise UnsupportedCpuError(f"{m['target']} ({m['cpu']})", missing.decode().split(", "))
        self._model = lib.dnnf_load(str(artifact.path / "weights.bin").encode())
        if not self._model:
            raise ArtifactError(lib.dnnf_error().decode())
        if threads:
            self.set_threads(threads)

    def set_threads(self, threads: int) -> int:
        return self._lib.dnnf_set_num_threads(threads)

    def bind(self, arrays: Sequence[np.ndarray]):
        """A zero-argument callable running the model; its ``outputs`` hold the results."""
        arrays = self.artifact.check_inputs(arrays)
        outputs = [np.empty(shape, dtype) for _, dtype, shape in self.artifact.outputs]
        ins = (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])
        outs = (ctypes.c_void_p * max(1, len(outputs)))(*[o.ctypes.data for o in outputs])
        in_bytes = (ctypes.c_size_t * max(1, len(arrays)))(*[a.nbytes for a in arrays])
        out_bytes = (ctypes.c_size_t * max(1, len(outputs)))(*[o.nbytes for o in outputs])
        run, model, error = self._lib.dnnf_run_sized, self._model, self._lib.dnnf_error

        def call():
            status = run(model, ins, in_bytes, outs, out_bytes)
            if status != 0:
                raise (InvalidInput if status == INVALID_ARGUMENT else ArtifactError)(error().decode())

        call.outputs = outputs
        call._keep = (self, arrays, ins, outs, in_bytes, out_bytes)  # the buffers must outlive the callable
        return call

    def run(self, arrays: Sequence[np.ndarray]) -> list:
        call = self.bind(arrays)
        call()
        return call.outputs

    def run_timed(self, arrays: Sequence[np.ndarray], repeat: int) -> tuple:
        """Outputs of one run, and the milliseconds of each of ``repeat`` further runs."""
        call = self.bind(arrays)
        call()
        return call.outputs, [_milliseconds(call) for _ in range(repeat)]

    @property
    def device(self) -> str | None:
        """The GPU the model runs on; None for a CPU library."""
        if not hasattr(self._lib, "dnnf_device_name"):
            return None
        return self._lib.dnnf_device_name(self._model).decode()

    def kernel_times(self) -> tuple | None:
        """(starts, ends): the CLOCK_MONOTONIC seconds (``time.perf_counter``'s clock) of
        each kernel launch of this thread's last run; None for a library compiled
        without ``profile_kernels``."""
        times = getattr(self._lib, "dnnf_kernel_times", None)
        if times is None:
            return None
        count = len(self.artifact.manifest["kernel_launches"])
        starts, ends = (ctypes.c_double * count)(), (ctypes.c_double * count)()
        times.argtypes = [ctypes.POINTER(ctypes.c_double)] * 2 + [ctypes.c_int]
        times(starts, ends, count)
        return list(starts), list(ends)

    def dispatch_times(self) -> list | None:
        """(kernel, GPU milliseconds) of each dispatch of the last run, in order; None for
        a CPU library, a device without timestamps, or before the first run."""
        if not hasattr(self._lib, "dnnf_dispatch_times"):
            return None
        count = self._lib.dnnf_dispatch_count(self._model)
        times = (ctypes.c_double * max(1, count))()
        if self._lib.dnnf_dispatch_times(self._model, times, count) != count or not count:
            return None
        return [(self._lib.dnnf_dispatch_name(self._model, i).decode(), times[i]) for i in range(count)]

    def __del__(self):
        if getattr(self, "_model", None):
            self._lib.dnnf_free(self._model)
            self._model = None


__all__ = ["Artifact", "ArtifactError", "HostSession", "InvalidInput"]
