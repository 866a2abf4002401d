"""CPU names and their features: what code compiled for a CPU needs at run time.

A CPU is named as ``llc -mcpu`` and ``clang -march`` name it (``native``,
``x86-64-v3``, ``znver3``, ``skylake-avx512``, ``cortex-a76``, ...). Its features
are the instruction-set extensions the code generator may use once that CPU is
chosen; they come from the LLVM toolchain itself (the predefined macros of
``clang-22 -march=CPU``), so every CPU LLVM knows works and none is hard-coded
here. Only the features a running program can test are kept:

* x86-64: the names ``__builtin_cpu_supports`` takes (GCC 12 and clang agree on
  all of ``X86_FEATURES``); that builtin also checks that the OS saves the
  registers (AVX-512 state in XCR0).
* AArch64: the features Linux reports in the ``AT_HWCAP`` / ``AT_HWCAP2`` bits of
  the auxiliary vector (``AARCH64_HWCAPS``).

``feature_checks`` turns a feature list into C expressions that a compiled
model's ``dnnf_load`` evaluates before running anything, so that a library built
for a CPU the machine is not refuses to load instead of dying on SIGILL.
"""

from __future__ import annotations

import functools
import re
import subprocess

from ..errors import UnsupportedTargetError
from .toolchain import find_clang, find_llc

NATIVE = "native"
# The extension dnnf-int8-matmuls computes byte products with.
VNNI_FEATURE = "avx512vnni"
# Environment variable: the CPU of the `host` target when none is given (default native).
CPU_ENV = "DNNF_CPU"

# x86-64 extensions a program can test with __builtin_cpu_supports, in the order
# they are checked (and listed in manifests). The LLVM feature name is the same.
X86_FEATURES = (
    "sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "lzcnt", "movbe", "bmi", "bmi2",
    "avx", "avx2", "fma", "f16c", "aes", "pclmul", "gfni", "vaes", "vpclmulqdq", "avxvnni",
    "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vbmi2",
    "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16", "avx512fp16", "avx512vp2intersect",
    "amx-tile", "amx-int8", "amx-bf16",
)

# AArch64 extension -> (predefined macro of clang, auxiliary vector entry, bit), from
# Linux's arch/arm64/include/uapi/asm/hwcap.h.
AARCH64_HWCAPS = {
    "neon": ("__ARM_NEON", "AT_HWCAP", 1),  # HWCAP_ASIMD
    "fullfp16": ("__ARM_FEATURE_FP16_VECTOR_ARITHMETIC", "AT_HWCAP", 10),  # HWCAP_ASIMDHP
    "dotprod": ("__ARM_FEATURE_DOTPROD", "AT_HWCAP", 20),  # HWCAP_ASIMDDP
    "sve": ("__ARM_FEATURE_SVE", "AT_HWCAP", 22),  # HWCAP_SVE
    "sve2": ("__ARM_FEATURE_SVE2", "AT_HWCAP2", 1),  # HWCAP2_SVE2
    "i8mm": ("__ARM_FEATURE_MATMUL_INT8", "AT_HWCAP2", 13),  # HWCAP2_I8MM
    "bf16": ("__ARM_FEATURE_BF16_VECTOR_ARITHMETIC", "AT_HWCAP2", 14),  # HWCAP2_BF16
}


class CpuError(ValueError):
    """An unknown CPU name, or the toolchain that resolves CPU names is missing."""


class UnsupportedCpuError(UnsupportedTargetError):
    """Code compiled for a CPU with features this machine lacks: it is never run."""

    def __init__(self, compiled_for: str, missing):
        missing = tuple(missing)
        super().__init__(f"this code was compiled for {compiled_for} and needs {', '.join(missing)}, which this CPU lacks",
                         missing)


def _x86_feature(macro: str) -> str:
    """``__SSE4_1__`` -> ``sse4.1``, ``__AMX_TILE__`` -> ``amx-tile``, ``__AVX512F__`` -> ``avx512f``."""
    name = macro.strip("_").lower()
    return re.sub(r"(?<=[0-9])_", ".", name).replace("_", "-")


@functools.lru_cache(maxsize=None)
def _predefined_macros(arch: str, cpu: str) -> frozenset:
    clang = find_clang()
    if clang is None:
        raise CpuError("clang-22 not found (package clang-22); it tells which features a CPU name has")
    flag = f"-march={cpu}" if arch == "x86_64" else f"-mcpu={cpu}"
    proc = subprocess.run(
        [clang, f"--target={arch}-linux-gnu", flag, "-dM", "-E", "-x", "c", "-"], input="", capture_output=True, text=True
    )
    if proc.returncode != 0:
        if "CPU" in proc.stderr or f"'{cpu}'" in proc.stderr:
            raise CpuError(f"unknown CPU {cpu!r} for {arch} (llc-22 -mtriple={arch} -mcpu=help lists the known ones)")
        raise CpuError(f"{clang} could not list the features of {cpu}: {proc.stderr.strip()}")
    return frozenset(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("#define "))


@functools.lru_cache(maxsize=None)
def cpu_features(arch: str, cpu: str) -> tuple:
    """The run-time-testable features of ``cpu`` (``native``: this machine's) on ``arch``."""
    macros = _predefined_macros(arch, cpu)
    if arch == "x86_64":
        present = {_x86_feature(m) for m in macros}
        return tuple(f for f in X86_FEATURES if f in present)
    if arch == "aarch64":
        return tuple(f for f, (macro, _, _) in AARCH64_HWCAPS.items() if macro in macros)
    raise CpuError(f"no CPU feature table for {arch}")


@functools.lru_cache(maxsize=None)
def host_cpu_name() -> str:
    """The name LLVM gives this machine's CPU (``native`` resolved, e.g. ``znver4``)."""
    llc = find_llc()
    if llc is not None:
        proc = subprocess.run([llc, "--version"], capture_output=True, text=True)
        found = re.search(r"Host CPU:\s*(\S+)", proc.stdout)
        if found:
            return found.group(1)
    raise CpuError("llc-22 not found (package llvm-22); it names this machine's CPU")


def feature_checks(arch: str, features) -> list:
    """``(feature, C expression true when this CPU has it)`` for the C glue of a model."""
    if arch == "x86_64":
        return [(f, f'__builtin_cpu_supports("{f}")') for f in features]
    if arch == "aarch64":
        return [(f, f"(getauxval({AARCH64_HWCAPS[f][1]}) & (1UL << {AARCH64_HWCAPS[f][2]}))") for f in features]
    raise CpuError(f"no CPU feature table for {arch}")


__all__ = [
    "AARCH64_HWCAPS",
    "CPU_ENV",
    "CpuError",
    "NATIVE",
    "UnsupportedCpuError",
    "X86_FEATURES",
    "cpu_features",
    "feature_checks",
    "host_cpu_name",
]
