"""Cross compilation: a lowered function as a static executable for another CPU.

``build_executable`` compiles the LLVM IR of a module lowered by ``lower_to_llvm``
(e.g. for ``target="aarch64"``) with ``llc``, writes a small C driver for one of its
functions and links both into a static executable with the cross compiler
(``aarch64-linux-gnu-gcc``). ``run_executable`` runs it (under ``qemu-aarch64``
when the target is not the host) on numpy inputs and returns the outputs.

The driver reads each input from a raw binary file, calls
``_mlir_ciface_<name>`` with memref descriptors (inputs, then the caller-allocated
results) ``repeat`` times, reports the time per call on stderr and writes the
results to raw binary files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..errors import CodegenError
from ..lowered_module import signatures
from ..target import get_target
from .target import CpuError, CpuTarget
from .toolchain import find_llc
from .objects import compile_object, emit_llvm_ir

_C_TYPES = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.int64): "int64_t",
    np.dtype(np.int32): "int32_t",
    np.dtype(np.int16): "int16_t",
    np.dtype(np.int8): "int8_t",
    np.dtype(np.bool_): "uint8_t",
}

CROSS_TOOLS = {
    # target name: (C compiler, emulator or None when the target is the host)
    "aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64"),
}


def cross_tools(target: "str | CpuTarget") -> tuple:
    """(C compiler, emulator) for ``target``; the emulator is None for the host."""
    t = get_target(target)
    if t.is_host:
        return (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang-22") or "cc", None)
    if t.name not in CROSS_TOOLS:
        raise CodegenError(f"no cross toolchain known for {t.name}")
    return CROSS_TOOLS[t.name]


def missing_tools(target: "str | CpuTarget" = "aarch64") -> list:
    """The tools that building and running for ``target`` needs and that are not installed."""
    missing = []
    try:
        cc, emulator = cross_tools(target)
    except CpuError:  # without clang the target's CPU cannot be resolved: name what is known
        missing.append("clang-22 (package clang-22)")
        cc, emulator = CROSS_TOOLS.get(target, (None, None)) if isinstance(target, str) else (None, None)
    if find_llc() is None:
        missing.append("llc-22 (package llvm-22)")
    if cc and shutil.which(cc) is None:
        missing.append(f"{cc} (package gcc-aarch64-linux-gnu)" if "aarch64" in cc else cc)
    if emulator and shutil.which(emulator) is None:
        missing.append(f"{emulator} (package qemu-user)")
    return missing


def c_driver_source(name: str, inputs, outputs) -> str:
    """C source of a driver calling ``_mlir_ciface_<name>`` (see the module docstring)."""
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <time.h>",
        "",
    ]
    ranks = sorted({len(shape) for _, shape in list(inputs) + list(outputs)})
    for rank in ranks:
        lines.append(
            f"typedef struct {{ void *allocated; void *aligned; int64_t offset; int64_t sizes[{max(rank, 1)}]; "
            f"int64_t strides[{max(rank, 1)}]; }} memref{rank}_t;"
        )
    params = ", ".join(f"memref{len(shape)}_t *" for _, shape in list(inputs) + list(outputs))
    lines += [
        f"void _mlir_ciface_{name}({params});",
        "",
        "static void *load(const char *path, size_t bytes) {",
        "  void *data = aligned_alloc(64, (bytes + 63) / 64 * 64);",
        "  FILE *f = fopen(path, \"rb\");",
        "  if (!f || fread(data, 1, bytes, f) != bytes) { fprintf(stderr, \"cannot read %s\\n\", path); exit(2); }",
        "  fclose(f);",
        "  return data;",
        "}",
        "",
        "static void store(const char *path, const void *data, size_t bytes) {",
        "  FILE *f = fopen(path, \"wb\");",
        "  if (!f || fwrite(data, 1, bytes, f) != bytes) { fprintf(stderr, \"cannot write %s\\n\", path); exit(2); }",
        "  fclose(f);",
        "}",
        "",
        "int main(int argc, char **argv) {",
        f"  if (argc < {len(inputs) + len(outputs) + 1}) {{",
        f"    fprintf(stderr, \"usage: %s {' '.join(['IN'] * len(inputs) + ['OUT'] * len(outputs))} [REPEAT]\\n\", argv[0]);",
        "    return 2;",
        "  }",
        f"  int repeat = argc > {len(inputs) + len(outputs) + 1} ? atoi(argv[{len(inputs) + len(outputs) + 1}]) : 1;",
    ]
    args = []
    for i, (dtype, shape) in enumerate(list(inputs) + list(outputs)):
        ctype = _C_TYPES[np.dtype(dtype)]
        count = int(np.prod(shape)) if shape else 1
        rank = len(shape)
        var = f"m{i}"
        if i < len(inputs):
            lines.append(f"  {ctype} *d{i} = load(argv[{i + 1}], {count} * sizeof({ctype}));")
        else:
            lines.append(f"  {ctype} *d{i} = aligned_alloc(64, ({count} * sizeof({ctype}) + 63) / 64 * 64);")
        strides = [int(np.prod(shape[j + 1:])) for j in range(rank)]
        sizes = ", ".join(str(d) for d in shape) or "1"
        lines.append(
            f"  memref{rank}_t {var} = {{d{i}, d{i}, 0, {{{sizes}}}, {{{', '.join(str(s) for s in strides) or '1'}}}}};"
        )
        args.append(f"&{var}")
    lines += [
        "  struct timespec t0, t1;",
        "  clock_gettime(CLOCK_MONOTONIC, &t0);",
        f"  for (int r = 0; r < repeat; ++r) _mlir_ciface_{name}({', '.join(args)});",
        "  clock_gettime(CLOCK_MONOTONIC, &t1);",
        "  double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);",
        "  fprintf(stderr, \"%.6f ms per call\\n\", 1e3 * seconds / repeat);",
    ]
    for j, (dtype, shape) in enumerate(outputs):
        i = len(inputs) + j
        ctype = _C_TYPES[np.dtype(dtype)]
        count = int(np.prod(shape)) if shape else 1
        lines.append(f"  store(argv[{i + 1}], d{i}, {count} * sizeof({ctype}));")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


@dataclass
class Executable:
    path: str
    object_path: str
    name: str
    inputs: list
    outputs: list
    target: CpuTarget


def build_executable(
    module,
    name: str = "main",
    target: "str | CpuTarget" = "aarch64",
    directory: Optional[str] = None,
    llvm_ir: Optional[str] = None,
) -> Executable:
    """Link ``@name`` of a lowered ``module`` with a C driver into a static executable."""
    t = get_target(target)
    missing = missing_tools(t)
    if missing:
        raise CodegenError("missing tools: " + ", ".join(missing))
    sig = signatures(module)
    if name not in sig:
        raise CodegenError(f"no public function @{name} in the module")
    inputs, outputs = sig[name]
    directory = directory or tempfile.mkdtemp(prefix="dnnf-cross-")
    os.makedirs(directory, exist_ok=True)
    ir_text = llvm_ir if llvm_ir is not None else emit_llvm_ir(module)
    # The kernel may be called `main`: rename its definition so the driver's C main links.
    ir_text = re.sub(r"@main\b", "@__dnnf_kernel_main", ir_text)
    obj = compile_object(ir_text, target=t, output=os.path.join(directory, f"{name}.o"))
    driver = os.path.join(directory, f"{name}_driver.c")
    with open(driver, "w") as f:
        f.write(c_driver_source(name, inputs, outputs))
    exe = os.path.join(directory, f"{name}.{t.name}")
    cc, _ = cross_tools(t)
    cmd = [cc, "-O2", "-static", driver, obj, "-o", exe, "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CodegenError(f"{cc} failed:\n{proc.stderr.strip()}")
    return Executable(exe, obj, name, inputs, outputs, t)


def run_executable(exe: Executable, arrays: Sequence[np.ndarray], repeat: int = 1, timeout: float = 600):
    """Run ``exe`` on ``arrays``; returns (outputs, milliseconds per call)."""
    _, emulator = cross_tools(exe.target)
    directory = os.path.dirname(exe.path)
    files = []
    for i, (a, (dtype, shape)) in enumerate(zip(arrays, exe.inputs)):
        a = np.ascontiguousarray(a, dtype=dtype)
        if tuple(a.shape) != tuple(shape):
            raise CodegenError(f"input {i} must have shape {shape}, got {a.shape}")
        path = os.path.join(directory, f"in{i}.bin")
        a.tofile(path)
        files.append(path)
    out_files = [os.path.join(directory, f"out{j}.bin") for j in range(len(exe.outputs))]
    cmd = ([emulator] if emulator else []) + [exe.path] + files + out_files + [str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise CodegenError(f"{' '.join(cmd[:2])} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    outputs = [np.fromfile(p, dtype=dtype).reshape(shape) for p, (dtype, shape) in zip(out_files, exe.outputs)]
    ms = None
    for line in proc.stderr.splitlines():
        if line.endswith("ms per call"):
            ms = float(line.split()[0])
    return outputs, ms


def disassemble(object_path: str, function: Optional[str] = None) -> str:
    """``llvm-objdump-22 -d`` of an object file (optionally one symbol)."""
    objdump = shutil.which("llvm-objdump-22") or shutil.which("llvm-objdump")
    if objdump is None:
        raise CodegenError("llvm-objdump not found (package llvm-22)")
    cmd = [objdump, "-d", "--no-show-raw-insn"]
    if function:
        cmd.append(f"--disassemble-symbols={function}")
    cmd.append(object_path)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CodegenError(proc.stderr.strip())
    return proc.stdout


__all__ = [
    "CROSS_TOOLS",
    "Executable",
    "build_executable",
    "c_driver_source",
    "cross_tools",
    "disassemble",
    "missing_tools",
    "run_executable",
]
