"""CPU targets: what the code generator needs to know about the machine it compiles for.

A ``Target`` is an architecture (``host``: the one this process runs on, or
``aarch64``) and a CPU named as LLVM names it. The CPU decides the features the
generated code may use (``cpu/features.py``) and from them the vector shape that
tile sizes are derived from: AVX-512 gives 512-bit vectors and 32 registers, AVX2
with FMA 256-bit and 16, NEON 128-bit and 32.

``get_target("host", cpu=None)`` takes the CPU from ``$DNNF_CPU``, else ``native``
(this machine, whatever it is). Naming one (``x86-64-v3``, ``znver3``,
``skylake-avx512``) makes schedules, vector widths and instructions the same on
every machine, which is what tests that check them need; code for a CPU above
this machine's still compiles, and refuses to run (``missing_features``).
"""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import dataclass

from .cpu.features import CPU_ENV, NATIVE, CpuError, cpu_features, host_cpu_name

_TRIPLES = {"x86_64": "x86_64-unknown-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}
_ARCH_ALIASES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
# The CPU of a cross target when none is given: the baseline every such core has.
_DEFAULT_CROSS_CPU = {"aarch64": "generic"}


@dataclass(frozen=True)
class Target:
    name: str  # "host" or "aarch64"
    triple: str
    cpu: str  # as asked, for llc -mcpu and llvm.func target_cpu: "native" or an LLVM CPU name
    cpu_name: str  # "native" resolved to this machine's CPU (e.g. "znver4"); else the same as cpu
    features: tuple  # run-time-testable extensions the code may use (cpu.cpu_features)
    vector_bits: int  # width of one vector register
    vector_registers: int  # number of architectural vector registers
    is_host: bool = False  # the triple is this machine's (its code can be loaded into this process)

    @property
    def arch(self) -> str:
        return self.triple.split("-", 1)[0]

    @property
    def pinned(self) -> bool:
        """True when the code must carry its CPU and features (every target but the
        host's native CPU, which the JIT and ``llc -mcpu=native`` pick by themselves)."""
        return not (self.is_host and self.cpu == NATIVE)

    @property
    def llvm_features(self) -> str:
        """``+f1,+f2,...``: llc's -mattr and the functions' target_features."""
        return ",".join(f"+{f}" for f in self.features)

    def lanes(self, element_bits: int = 32) -> int:
        """Elements of ``element_bits`` in one vector register."""
        return max(1, self.vector_bits // element_bits)

    def missing_features(self) -> tuple:
        """The features this code needs that this machine lacks (all of them for a
        foreign architecture): empty when it can run here."""
        if not self.is_host:
            return self.features or (self.arch,)
        if self.cpu == NATIVE:
            return ()
        available = set(cpu_features(self.arch, NATIVE))
        return tuple(f for f in self.features if f not in available)

    def describe(self) -> str:
        """``host (znver4, native)`` / ``aarch64 (cortex-a76)``: what a message names."""
        cpu = self.cpu_name if self.cpu == self.cpu_name else f"{self.cpu_name}, {self.cpu}"
        return f"{self.name} ({cpu})"


def _vector_shape(arch: str, features) -> tuple:
    if arch == "x86_64":
        if "avx512f" in features:
            return 512, 32
        if "avx2" in features and "fma" in features:
            return 256, 16
        return 128, 16
    return 128, 32  # AArch64 NEON: 32 registers of 128 bits


def _host_arch() -> str:
    machine = platform.machine().lower()
    if machine not in _ARCH_ALIASES:
        raise CpuError(f"this machine's architecture ({machine}) is not supported; x86_64 and aarch64 are")
    return _ARCH_ALIASES[machine]


@functools.lru_cache(maxsize=None)
def _make_target(name: str, arch: str, cpu: str, is_host: bool) -> Target:
    if cpu == NATIVE and not is_host:
        raise CpuError(f"cpu=native names this machine's CPU; give an {arch} CPU name instead")
    features = cpu_features(arch, cpu)
    cpu_name = host_cpu_name() if cpu == NATIVE else cpu
    bits, registers = _vector_shape(arch, features)
    return Target(name, _TRIPLES[arch], cpu, cpu_name, features, bits, registers, is_host)


def host_target(cpu: str | None = None) -> Target:
    """This machine's architecture with ``cpu`` (default ``$DNNF_CPU``, else native)."""
    return _make_target("host", _host_arch(), cpu or os.environ.get(CPU_ENV) or NATIVE, True)


def get_target(target: "str | Target", cpu: str | None = None) -> Target:
    """The target named ``target`` (``host`` or ``aarch64``) for ``cpu``; a ``Target``
    is returned as it is unless ``cpu`` names another CPU."""
    if isinstance(target, Target):
        if cpu is None or cpu == target.cpu:
            return target
        target = target.name
    if target in ("host", "native"):
        return host_target(cpu)
    arch = _ARCH_ALIASES.get(target.split("-", 1)[0])
    if arch is None or arch not in _DEFAULT_CROSS_CPU:
        raise ValueError(f"unknown target {target!r}; known: host, aarch64")
    if arch == _host_arch():
        return host_target(cpu)
    return _make_target(arch, arch, cpu or _DEFAULT_CROSS_CPU[arch], False)


__all__ = ["CpuError", "Target", "get_target", "host_target"]
