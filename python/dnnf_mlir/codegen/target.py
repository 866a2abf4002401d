"""CPU targets: what the code generator needs to know about the machine.

A ``Target`` names the LLVM triple, CPU and features (for ``llc`` and for the
``target_cpu`` / ``target_features`` attributes put on every ``llvm.func``) and the
vector shape that the tile sizes are derived from: the vector register width and
how many vector registers there are.

``host_target()`` reads the running machine (``/proc/cpuinfo`` on Linux x86-64):
AVX-512 gives 512-bit vectors and 32 registers, AVX2 256-bit and 16. The
``aarch64`` target is a generic Armv8-A core with NEON (128-bit, 32 registers).
"""

from __future__ import annotations

import functools
import platform
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Target:
    name: str
    triple: str
    cpu: str  # llc -mcpu / llvm.func target_cpu; "" leaves the default
    features: str  # llc -mattr / llvm.func target_features, e.g. "+neon"
    vector_bits: int  # width of one vector register
    vector_registers: int  # number of architectural vector registers
    is_host: bool = False

    def lanes(self, element_bits: int = 32) -> int:
        """Elements of ``element_bits`` in one vector register."""
        return max(1, self.vector_bits // element_bits)

    def with_(self, **changes) -> "Target":
        return replace(self, **changes)


def _x86_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@functools.lru_cache(maxsize=None)
def host_target() -> Target:
    """The machine this process runs on (what the ExecutionEngine compiles for)."""
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        flags = _x86_flags()
        if "avx512f" in flags:
            bits, registers = 512, 32
        elif "avx2" in flags and "fma" in flags:
            bits, registers = 256, 16
        else:
            bits, registers = 128, 16
        # "native": llc and the JIT resolve it to the host CPU and all its features.
        return Target("host", "x86_64-unknown-linux-gnu", "native", "", bits, registers, is_host=True)
    if machine in ("aarch64", "arm64"):
        return Target("host", "aarch64-unknown-linux-gnu", "native", "+neon", 128, 32, is_host=True)
    return Target("host", f"{machine}-unknown-linux-gnu", "native", "", 128, 16, is_host=True)


AARCH64 = Target("aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon", 128, 32)
# Fixed x86-64 targets (reproducible schedules whatever the host is).
X86_AVX512 = Target("x86_64-avx512", "x86_64-unknown-linux-gnu", "x86-64-v4", "", 512, 32)
X86_AVX2 = Target("x86_64-avx2", "x86_64-unknown-linux-gnu", "x86-64-v3", "", 256, 16)

TARGETS = {t.name: t for t in (AARCH64, X86_AVX512, X86_AVX2)}


def get_target(target: "str | Target") -> Target:
    if isinstance(target, Target):
        return target
    if target in ("host", "native"):
        return host_target()
    if target in ("arm64", "aarch64-linux-gnu"):
        return AARCH64
    if target in TARGETS:
        return TARGETS[target]
    raise ValueError(f"unknown target {target!r}; known: host, {', '.join(TARGETS)}")


__all__ = ["AARCH64", "TARGETS", "Target", "X86_AVX2", "X86_AVX512", "get_target", "host_target"]
