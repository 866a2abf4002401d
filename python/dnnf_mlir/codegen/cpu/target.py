"""CPU targets: what the CPU code generator needs to know about the machine it compiles for.

A ``CpuTarget`` is an architecture (``host``: the one this process runs on, or
``aarch64``) and a CPU named as LLVM names it. The CPU decides the features the
generated code may use (``features.py``) and from them the vector shape that tile
sizes are derived from: AVX-512 gives 512-bit vectors and 32 registers, AVX2 with FMA
256-bit and 16, NEON 128-bit and 32.

``host_target(cpu=None)`` takes the CPU from ``$DNNF_CPU``, else ``native`` (this
machine, whatever it is). Naming one (``x86-64-v3``, ``znver3``, ``skylake-avx512``)
makes schedules, vector widths and instructions the same on every machine, which is
what tests that check them need; code for a CPU above this machine's still compiles,
and refuses to run (``missing_features``). ``RESOLVERS`` and ``ALIASES`` are the
names the package registers for ``codegen.get_target``.
"""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import dataclass, replace
from typing import ClassVar

from ...ecg.ops.structure import MAX_FUSED_INPUTS, MAX_FUSED_OUTPUTS
from ..target import FusionLimits, Target
from .features import CPU_ENV, NATIVE, VNNI_FEATURE, CpuError, cpu_features, host_cpu_name

_TRIPLES = {"x86_64": "x86_64-unknown-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}
_ARCH_ALIASES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
# The CPU of a cross target when none is given: the baseline every such core has.
_DEFAULT_CROSS_CPU = {"aarch64": "generic"}

# A fused kernel computes its body per element (or per vector of elements) and keeps
# every intermediate value that a later body op still needs in a register. x86-64 with
# AVX2, the smallest register file the compiler targets, has 16 vector registers; a
# body needing more live values at once spills on every iteration. The same limits
# for every CPU, so that a model's kernels do not depend on the CPU it is compiled for --
# but for the byte conversions of integer contractions, kernels of their own where VNNI
# computes those contractions from the bytes (``FusionLimits.byte_contractions``).
CPU_FUSION_LIMITS = FusionLimits(max_inputs=MAX_FUSED_INPUTS, max_outputs=MAX_FUSED_OUTPUTS, max_live_values=16)


@dataclass(frozen=True)
class CpuTarget(Target):
    kind: ClassVar[str] = "cpu"
    # Merged, the CPU code computes each projection over its own weight panels anyway
    # (``sliced_matmuls.py``), so the merge shares no work. Measured in BERT-base (Zen 4,
    # 1 thread, the Q/K/V kernels of its 12 layers per run, 45 interleaved runs, load 4):
    # merged 50.52 ms (min; p10 51.19), three matmul + heads kernels 49.51 (50.16).
    merges_laid_out_projections: ClassVar[bool] = False

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
    def runs_here(self) -> bool:
        return self.is_host

    @property
    def fusion_limits(self) -> FusionLimits:
        return replace(CPU_FUSION_LIMITS, byte_contractions=VNNI_FEATURE in self.features)

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

    def options(self) -> dict:
        return {"cpu": self.cpu}

    def cache_fields(self) -> dict:
        return {"target": self.name, "cpu": self.cpu_name, "cpu_features": list(self.features)}


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
def _make_target(name: str, arch: str, cpu: str, is_host: bool) -> CpuTarget:
    if cpu == NATIVE and not is_host:
        raise CpuError(f"cpu=native names this machine's CPU; give an {arch} CPU name instead")
    features = cpu_features(arch, cpu)
    cpu_name = host_cpu_name() if cpu == NATIVE else cpu
    bits, registers = _vector_shape(arch, features)
    return CpuTarget(name, _TRIPLES[arch], cpu, cpu_name, features, bits, registers, is_host)


def host_target(cpu: str | None = None) -> CpuTarget:
    """This machine's architecture with ``cpu`` (default ``$DNNF_CPU``, else native)."""
    return _make_target("host", _host_arch(), cpu or os.environ.get(CPU_ENV) or NATIVE, True)


def _resolve_host(name: str, cpu: str | None = None) -> CpuTarget:
    return host_target(cpu)


def _resolve_cross(name: str, cpu: str | None = None) -> CpuTarget:
    """``aarch64`` (or a name starting ``aarch64-`` / ``arm64-``): the host target when
    this machine is one, else the cross target, its CPU ``generic`` unless named."""
    arch = _ARCH_ALIASES[name.split("-", 1)[0]]
    if arch == _host_arch():
        return host_target(cpu)
    return _make_target(arch, arch, cpu or _DEFAULT_CROSS_CPU[arch], False)


# The names codegen.get_target resolves to CPU targets, and other names for them.
RESOLVERS = {"host": _resolve_host, "aarch64": _resolve_cross}
ALIASES = {"native": "host", "arm64": "aarch64"}


__all__ = ["ALIASES", "CPU_FUSION_LIMITS", "CpuError", "CpuTarget", "RESOLVERS", "host_target"]
