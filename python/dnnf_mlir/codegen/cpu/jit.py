"""Running a lowered module in this process: MLIR's ExecutionEngine at -O3, with
callables over numpy arrays.

The engine compiles for this machine's CPU unless the functions name another (a
pinned ``cpu``); code for a CPU with features this machine lacks compiles, but
calling it raises ``UnsupportedCpuError``. A module that runs on several threads
loads the LLVM OpenMP runtime (libomp) first, and each call lets libomp size its
teams by the machine's load (a compiled library's glue sizes them itself:
``compiler/team_sizing.py``). The heap keeps large freed buffers as a
compiled library's does (``keep_buffers_in_heap``), so that a timed call costs what a
library's run costs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import platform
import threading
from typing import Callable, Optional, Sequence

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ..errors import CodegenError
from ..lowered_module import SIGNATURES, lowered_target_name, signatures
from ..pipeline import lower
from ..target import get_target
from .features import UnsupportedCpuError
from .heap_settings import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES, TRIM_THRESHOLD_BYTES
from .lowered import USES_OPENMP, lowered_cpu
from .target import CpuTarget


_LIBOMP_CANDIDATES = (
    "/usr/lib/llvm-22/lib/libomp.so",
    "/usr/lib/x86_64-linux-gnu/libomp.so.5",
    "/usr/lib/aarch64-linux-gnu/libomp.so.5",
)
_libomp_lock = threading.Lock()
_libomp_loaded: Optional[str] = None


def find_libomp() -> Optional[str]:
    """Path of the LLVM OpenMP runtime (``$DNNF_LIBOMP``, Debian's libomp5-NN, ...)."""
    env = os.environ.get("DNNF_LIBOMP")
    if env:
        return env if os.path.exists(env) else None
    for path in _LIBOMP_CANDIDATES + tuple(sorted(glob.glob("/usr/lib/llvm-*/lib/libomp.so"), reverse=True)):
        if os.path.exists(path):
            return path
    found = ctypes.util.find_library("omp")
    return found


def load_libomp() -> str:
    global _libomp_loaded
    with _libomp_lock:
        if _libomp_loaded:
            return _libomp_loaded
        path = find_libomp()
        if path is None:
            raise CodegenError(
                "the module runs on several threads with OpenMP but no LLVM OpenMP runtime was found "
                "(install libomp5-22 / libomp-22-dev, or set DNNF_LIBOMP=/path/to/libomp.so)"
            )
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        _libomp_loaded = path
        return path


class JitFunction:
    """One compiled function: call it with numpy arrays, get the results back."""

    def __init__(self, engine, name: str, inputs, outputs, owner=None, refusal: Optional[UnsupportedCpuError] = None):
        self._engine = engine
        self._owner = owner
        self._refusal = refusal  # compiled, but for a CPU this machine is not: never called
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self._fn = engine.lookup(name)

    def _check(self, arrays):
        if len(arrays) != len(self.inputs):
            raise CodegenError(f"@{self.name} takes {len(self.inputs)} inputs, got {len(arrays)}")
        checked = []
        for i, (a, (dtype, shape)) in enumerate(zip(arrays, self.inputs)):
            a = np.asarray(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
            if a.dtype != dtype or (shape and any(s != -1 and s != d for s, d in zip(shape, a.shape))) or a.ndim != len(shape):
                raise CodegenError(f"input {i} of @{self.name} must be {np.dtype(dtype)}{list(shape)}, got {a.dtype}{list(a.shape)}")
            checked.append(a)
        return checked

    def bind(self, *arrays, outputs: Optional[Sequence[np.ndarray]] = None) -> Callable[[], None]:
        """A zero-argument callable running the function on these arrays (for timing).

        The results are written to ``outputs`` (allocated when not given; the bound
        callable's ``outputs`` attribute holds them).
        """
        if self._refusal is not None:
            raise self._refusal
        runtime = _mlir.runtime
        arrays = self._check(arrays)
        if outputs is None:
            if any(-1 in shape for _, shape in self.outputs):
                raise CodegenError("dynamic result shapes are not supported")
            outputs = [np.empty(shape, dtype) for dtype, shape in self.outputs]
        descriptors = [runtime.get_ranked_memref_descriptor(a) for a in list(arrays) + list(outputs)]
        pointers = [ctypes.pointer(ctypes.pointer(d)) for d in descriptors]
        packed = (ctypes.c_void_p * len(pointers))(*[ctypes.cast(p, ctypes.c_void_p) for p in pointers])
        fn = self._fn
        dynamic_teams = self._owner.dynamic_teams if self._owner is not None else None

        def call():
            if dynamic_teams is not None:
                dynamic_teams(1)  # libomp sizes the teams by the machine's load (openmp.py)
            fn(packed)

        call.outputs = list(outputs)
        # The function must outlive its engine and the buffers its descriptors point to.
        call._keep = (self, arrays, descriptors, pointers, packed)
        return call

    def __call__(self, *arrays) -> list:
        call = self.bind(*arrays)
        call()
        return call.outputs


@functools.lru_cache(maxsize=None)
def keep_buffers_in_heap() -> None:
    """Apply ``heap_settings`` (why: its docstring) in this process, as a compiled
    library's loader does. glibc only."""
    if platform.libc_ver()[0] == "glibc":
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)


class JitModule:
    """The public functions of a lowered module, compiled by MLIR's ExecutionEngine."""

    def __init__(self, module: ir.Module, opt_level: int = 3, shared_libs: Sequence[str] = ()):
        keep_buffers_in_heap()
        libs = list(shared_libs)
        # The calling thread's omp_set_dynamic, called before each call of a function.
        self.dynamic_teams = None
        if USES_OPENMP in module.operation.attributes:
            self.dynamic_teams = ctypes.CDLL(load_libomp()).omp_set_dynamic
        self.signatures = signatures(module)
        self.module = module  # keeps the module (and its context) alive with the engine
        self.target = _lowered_target(module)
        missing = self.target.missing_features()
        refusal = UnsupportedCpuError(self.target.describe(), missing) if missing else None
        engine_cls = _mlir.execution_engine.ExecutionEngine
        try:
            self.engine = engine_cls(module, opt_level=opt_level, shared_libs=libs)
        except RuntimeError as e:
            raise CodegenError(f"ExecutionEngine: {e}") from None
        self.functions = {}
        for name, (inputs, outputs) in self.signatures.items():
            try:
                self.functions[name] = JitFunction(self.engine, name, inputs, outputs, owner=self, refusal=refusal)
            except RuntimeError as e:
                raise CodegenError(f"could not compile @{name}: {e}") from None

    def __getitem__(self, name: str) -> JitFunction:
        return self.functions[name]

    def __getattr__(self, name: str) -> JitFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)


def _lowered_target(module: ir.Module) -> CpuTarget:
    return get_target(lowered_target_name(module) or "host", lowered_cpu(module))


def jit(module: ir.Module, *, threads: int = 1, opt_level: int = 3, shared_libs: Sequence[str] = ()) -> JitModule:
    """Compile ``module`` for this machine. A module still on linalg is lowered first
    (in place, for the host, with ``threads``). A host module lowered for a CPU with
    features this machine lacks compiles, but calling it raises ``UnsupportedCpuError``."""
    name = lowered_target_name(module)
    if SIGNATURES not in module.operation.attributes:
        lower(module, "host", threads=threads)
    elif name not in (None, "host"):
        raise CodegenError(f"the module was lowered for {name}; only host modules can be run by the JIT")
    return JitModule(module, opt_level=opt_level, shared_libs=shared_libs)


__all__ = ["JitFunction", "JitModule", "find_libomp", "jit", "keep_buffers_in_heap", "load_libomp"]
