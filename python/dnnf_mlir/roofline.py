"""This machine's roofline: the FMA and int8 peaks of one core and the STREAM triad bandwidth.

Measured once per CPU and cached, because the profiler and the kernel sweep judge
every kernel against it and the measurement takes seconds. The kernels are
``runtime/roofline/roofline.c``, built by clang for the host CPU with vectors of
its widest ISA (``CpuTarget.lanes``: 16 f32 lanes with AVX-512): independent chains
of vector FMAs for the peak, the same chains of byte dot products (unsigned by signed
bytes into i32 lanes: ``vpdpbusd`` with VNNI, else ``vpmaddubsw`` + ``vpmaddwd``) for the
int8 peak, and ``a = b + s * c`` over arrays far larger than the caches, at 1 thread and
at every core, for the bandwidth. A kernel whose code does byte dot products
(``INT8_FLOPS_ATTR``: QLinearConv's and MatMulInteger's on VNNI, four multiply-adds an
i32 lane) is judged by the int8 peak for those FLOPs: against the f32 one, a Zen 4's
reached "368% of the FMA peak". Each figure is the best of
several trials, since the machine may be shared: for the peak, many of under a
millisecond each, which other processes rarely all interrupt.

The peak depends on the code's vectors: an artifact compiled for a lower CPU
(``--cpu x86-64-v3`` on an AVX-512 machine: 8 lanes, not 16) is judged against the
peak of code built for that CPU on this machine, so the figures are measured per
CPU the code is for (``$DNNF_CPU``, else the host) as well as per machine.

The cache is ``$DNNF_ROOFLINE``, else ``dnnf-mlir/roofline-2.json`` in the user's
cache directory (2: with the int8 peak; the entries of ``roofline.json`` stay for older
checkouts sharing the home directory, which cannot read the new field), one entry per CPU (LLVM's name and the model name the kernel
reports) and CPU the code is for, so that machines sharing a home directory each
keep their own.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .codegen.cpu.features import CpuError, host_cpu_name
from .codegen.cpu.target import CpuTarget, host_target
from .codegen.cpu.toolchain import find_clang

ROOFLINE_ENV = "DNNF_ROOFLINE"
ACCUMULATORS = 12  # roofline.c's independent FMA chains
# One FMA trial: 200k x 12 vector FMAs, under a millisecond at 100 GFLOP/s. On a shared
# machine (2 vCPUs, load 9) every one of 5 trials of 2M (8 ms) was preempted: the peak
# of a Zen 4 whose FMAs reach 118 GFLOP/s was measured 40-73; trials of 200k, the best
# of 50, measured 117-118 in every run at the same load.
FMA_ITERATIONS = 200_000
TRIAD_FLOATS = 1 << 24  # per array: 64 MiB, far above any L3 of today
TRIAD_REPS = 5
TRIALS = 50  # FMA trials, the best of them counts


class RooflineError(Exception):
    """The roofline kernels cannot be built or run on this machine."""


@dataclass(frozen=True)
class Roofline:
    """A CPU's measured limits: the FMA peak of one core (GFLOP/s, f32), its int8 peak
    (GOP/s, two a byte multiply-add; 0 where the CPU has no byte dot product) and the
    triad bandwidth (GB/s) at each measured thread count."""

    cpu: str  # LLVM's name (znver4)
    model_name: str  # the kernel's (/proc/cpuinfo), e.g. AMD EPYC 9R14
    lanes: int  # f32 lanes of the vectors the peak was measured with
    fma_gflops: float  # one core
    triad_gbs: dict  # threads (as a string, JSON's keys) -> GB/s
    measured_at: float
    code_cpu: str = ""  # the CPU the kernels were built for, when not this one (x86-64-v3)
    int8_gops: float = 0.0  # one core
    int8_instruction: str = ""  # what the int8 peak was measured with, "vpdpbusd zmm (AVX512-VNNI)"

    def peak_gflops(self, threads: int = 1) -> float:
        return self.fma_gflops * threads

    def int8_peak_gops(self, threads: int = 1) -> float:
        """The int8 peak, else (no byte dot product measured) the FMA peak."""
        return (self.int8_gops or self.fma_gflops) * threads

    def bandwidth_gbs(self, threads: int = 1) -> float:
        """The triad bandwidth at the largest measured thread count not above ``threads``."""
        counts = sorted(int(t) for t in self.triad_gbs)
        usable = [t for t in counts if t <= threads] or counts[:1]
        return self.triad_gbs[str(usable[-1])]

    def ridge(self, threads: int = 1) -> float:
        """The arithmetic intensity (FLOP per byte) where compute starts to bound."""
        return self.peak_gflops(threads) / self.bandwidth_gbs(threads)

    def judge(self, flops: float, nbytes: float, seconds: float, threads: int = 1, floor: float = 0.0,
              int8_flops: float = 0.0) -> tuple:
        """``(bound, fraction)`` of a kernel that did ``flops`` (``int8_flops`` of them as
        byte dot products) and moved ``nbytes`` in ``seconds``: ``compute`` or ``int8``
        (whichever of its FLOPs take longer at their peak: the FMA's, the int8 one, which
        is the FMA's on a CPU without byte dot products) when
        its FLOPs take longer at their peaks than its bytes at the bandwidth (its intensity
        above the ridge, for f32), else ``memory``; the fraction is the time the limit
        allows over ``seconds``. ``floor``: seconds every timed call takes however little
        it does (``kernel_sweep/call_floor.py``), added to the time the limit allows."""
        if seconds <= 0:
            return ("memory", 0.0)
        fma_seconds = (flops - int8_flops) / 1e9 / self.peak_gflops(threads)
        int8_seconds = int8_flops / 1e9 / self.int8_peak_gops(threads)
        memory_seconds = nbytes / 1e9 / self.bandwidth_gbs(threads)
        if nbytes <= 0 or fma_seconds + int8_seconds >= memory_seconds:
            bound = "int8" if self.int8_gops and int8_seconds > fma_seconds else "compute"
            return (bound, (floor + fma_seconds + int8_seconds) / seconds)
        return ("memory", (floor + memory_seconds) / seconds)

    def describe(self) -> str:
        bandwidth = ", ".join(f"{gbs:.1f} GB/s at {t} thread{'s' * (t != '1')}" for t, gbs in self.triad_gbs.items())
        code = f", code for {self.code_cpu}" if self.code_cpu else ""
        int8 = (f"int8 peak {self.int8_gops:.1f} GOP/s per core ({self.int8_instruction})" if self.int8_gops
                else "no int8 dot product (int8 judged by the FMA peak)")
        return (f"{self.model_name} ({self.cpu}): FMA peak {self.fma_gflops:.1f} GFLOP/s per core "
                f"({self.lanes} f32 lanes{code}), {int8}, triad {bandwidth}; "
                f"ridge {self.ridge():.1f} FLOP/byte at 1 thread")


LIMITS = {"compute": ("FMA peak", "peak"), "int8": ("int8 peak", "i8pk"), "memory": ("bandwidth", "BW")}


def limit_name(bound: str, short: bool = False) -> str:
    """The limit ``Roofline.judge``'s ``bound`` names, in words or (tables) in four letters."""
    return LIMITS[bound][short]


def default_path() -> Path:
    """``$DNNF_ROOFLINE``, else ``dnnf-mlir/roofline-2.json`` in the user's cache directory."""
    if os.environ.get(ROOFLINE_ENV):
        return Path(os.environ[ROOFLINE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dnnf-mlir" / "roofline-2.json"


def cpu_model_name() -> str:
    """The model name the kernel reports for this CPU (``lscpu``'s), else 'unknown CPU'."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return "unknown CPU"


def _code_target(cpu: "str | None") -> CpuTarget:
    """The host target of code built for ``cpu`` (else ``$DNNF_CPU``, else native)."""
    try:
        return host_target(cpu)
    except CpuError as error:
        raise RooflineError(str(error)) from None


def _foreign_cpu(target: CpuTarget) -> str:
    """``target``'s CPU name when it is not this machine's, else ''."""
    return "" if target.cpu_name == host_cpu_name() else target.cpu_name


def cpu_key(cpu: "str | None" = None) -> str:
    """The cache key of this machine's figures for code built for ``cpu`` (``cpu``,
    else ``$DNNF_CPU``, else native): the machine, and the code's CPU when it is another."""
    foreign = _foreign_cpu(_code_target(cpu))
    return f"{host_cpu_name()} | {cpu_model_name()}" + (f" | code for {foreign}" if foreign else "")


def _build(directory: Path, target: CpuTarget) -> ctypes.CDLL:
    clang = find_clang()
    if clang is None:
        raise RooflineError("clang-22 not found (package clang-22); it builds the roofline kernels")
    source = resources.files("dnnf_mlir") / "runtime" / "roofline" / "roofline.c"
    library = directory / "roofline.so"
    command = [clang, "-O2", f"-march={target.cpu_name}", f"-DLANES={target.lanes(32)}", "-shared", "-fPIC", "-pthread",
               "-x", "c", "-", "-o", str(library)]
    proc = subprocess.run(command, input=source.read_text(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RooflineError(f"building the roofline kernels failed: {proc.stderr.strip()[-2000:]}")
    lib = ctypes.CDLL(str(library))
    lib.dnnf_fma_seconds.restype = ctypes.c_double
    lib.dnnf_fma_seconds.argtypes = [ctypes.c_long, ctypes.POINTER(ctypes.c_float)]
    lib.dnnf_int8_seconds.restype = ctypes.c_double
    lib.dnnf_int8_seconds.argtypes = [ctypes.c_long, ctypes.POINTER(ctypes.c_int)]
    lib.dnnf_int8_macs.restype = ctypes.c_int
    lib.dnnf_int8_instruction.restype = ctypes.c_char_p
    lib.dnnf_triad_seconds.restype = ctypes.c_double
    lib.dnnf_triad_seconds.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    return lib


def _fma_gflops(lib, lanes: int, iterations: int) -> float:
    sink = ctypes.c_float()
    best = min(lib.dnnf_fma_seconds(iterations, ctypes.byref(sink)) for _ in range(TRIALS))
    return iterations * ACCUMULATORS * lanes * 2 / best / 1e9


def _int8_gops(lib, iterations: int) -> float:
    """The int8 peak (two operations a byte multiply-add), 0 without a byte dot product."""
    macs, sink = lib.dnnf_int8_macs(), ctypes.c_int()
    if macs == 0:
        return 0.0
    best = min(lib.dnnf_int8_seconds(iterations, ctypes.byref(sink)) for _ in range(TRIALS))
    return iterations * macs * 2 / best / 1e9


def _triad_gbs(lib, threads: int, floats: int) -> float:
    a, b, c = (np.full(floats, value, np.float32) for value in (0.0, 1.0, 2.0))
    seconds = lib.dnnf_triad_seconds(a.ctypes.data, b.ctypes.data, c.ctypes.data, floats, TRIAD_REPS, threads)
    if not np.allclose(a[:: floats // 7], 7.0):
        raise RooflineError("the triad kernel computed a wrong result")
    return 3 * 4 * floats / seconds / 1e9  # STREAM's count: two arrays read, one written


def measure(fma_iterations: int = FMA_ITERATIONS, triad_floats: int = TRIAD_FLOATS,
            cpu: "str | None" = None) -> Roofline:
    """Measure this machine's roofline for code built for ``cpu`` (else
    ``$DNNF_CPU``, else native; a few seconds)."""
    target = _code_target(cpu)
    if target.missing_features():
        raise RooflineError(f"this machine cannot run code for {target.describe()}: no roofline to measure")
    lanes = target.lanes(32)
    threads = sorted({1, os.cpu_count() or 1})
    with tempfile.TemporaryDirectory(prefix="dnnf-roofline-") as scratch:
        lib = _build(Path(scratch), target)
        fma = _fma_gflops(lib, lanes, fma_iterations)
        int8, instruction = _int8_gops(lib, fma_iterations), lib.dnnf_int8_instruction().decode()
        triad = {str(t): _triad_gbs(lib, t, triad_floats) for t in threads}
    return Roofline(host_cpu_name(), cpu_model_name(), lanes, fma, triad, time.time(), _foreign_cpu(target), int8,
                    instruction)


def _read_cache(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def machine_roofline(refresh: bool = False, path: "Path | None" = None, cpu: "str | None" = None) -> Roofline:
    """This machine's ``Roofline`` for code built for ``cpu`` (else
    ``$DNNF_CPU``, else native):
    the cached one, else (or with ``refresh``) measured now and stored."""
    path = path or default_path()
    entries, key = _read_cache(path), cpu_key(cpu)
    if key in entries and not refresh:
        return Roofline(**entries[key])
    roofline = measure(cpu=cpu)
    entries[key] = asdict(roofline)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(f".{os.getpid()}.tmp")
    staging.write_text(json.dumps(entries, indent=1) + "\n")
    staging.replace(path)  # atomic: a concurrent reader sees the old file or the new one
    return roofline


__all__ = ["ROOFLINE_ENV", "Roofline", "RooflineError", "cpu_key", "default_path", "limit_name", "machine_roofline",
           "measure"]
