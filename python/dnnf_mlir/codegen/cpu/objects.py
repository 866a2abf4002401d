"""LLVM IR and object files: the lowered module as LLVM IR text, and ``opt-22`` +
``llc-22`` turning it into an object for any CPU triple (x86-64, AArch64).

The bindings carry a newer LLVM (24git) than the installed tools: ``make_llc_compatible``
rewrites the constructs of its printer that LLVM 22's parser rejects. A big module is
split by ``llvm-split`` and its pieces compiled in parallel, joined by ``ld -r``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from typing import Optional

import ml_dtypes
import numpy as np

from ... import _mlir
from ..._mlir import ir
from ..errors import CodegenError
from ..target import get_target
from .target import CpuTarget
from .toolchain import find_llc, find_llvm_split, find_opt


def emit_llvm_ir(module: ir.Module) -> str:
    """LLVM IR text of an LLVM-dialect module (``lower_to_llvm`` output)."""
    llvm = _mlir.llvm
    with module.context:
        return str(llvm.translate_module_to_llvmir(module.operation))


def _float_bits_as_double(value: np.float32) -> str:
    return "0x" + np.float64(value).tobytes()[::-1].hex().upper()


def _old_hex_literal(match) -> str:
    """LLVM 24's ``f0x<bits>`` literal in the older syntax: a float is written as the
    bits of the same value as a double, a half as ``0xH<bits>``."""
    bits = match.group(1)
    if len(bits) == 8:
        return _float_bits_as_double(np.frombuffer(bytes.fromhex(bits)[::-1], np.float32)[0])
    return ("0xH" if len(bits) == 4 else "0x") + bits


def _old_float_decimal(match) -> str:
    """A float printed as its shortest decimal (or ``inf`` / ``nan``), which the older
    parser rejects unless exact: the same value in hexadecimal."""
    return f"{match.group(1)} " + _float_bits_as_double(np.float32(match.group(2)))


def _old_bfloat_decimal(match) -> str:
    """A bfloat printed as a decimal of 6 digits, which is not its exact value (the parser
    rejects it): its bits, the decimal rounded to the nearest bfloat, as ``0xR<bits>``."""
    return f"bfloat {match.group(1)}0xR{_bfloat_bits(float(match.group(2)))}"


def _bfloat_bits(value: float) -> str:
    return np.array(value, ml_dtypes.bfloat16).view(np.uint16).item().to_bytes(2, "big").hex().upper()


def _old_special_literal(match) -> str:
    """``inf``, ``-inf``, ``nan`` or ``+qnan`` in hexadecimal: a half's own bits, a float's or a double's as a double."""
    kind, operand, literal = match.groups()
    value = float(literal.replace("qnan", "nan"))
    if kind == "bfloat":
        return f"{kind} {operand}0xR{_bfloat_bits(value)}"
    text = "0xH" + np.float16(value).tobytes()[::-1].hex().upper() if kind == "half" else _float_bits_as_double(value)
    return f"{kind} {operand}{text}"


LLC_COMPAT_REWRITES: list = [
    (r"\bbfloat ((?:%[-\w.]+, )?)f0x([0-9A-Fa-f]{4})\b", r"bfloat \g<1>0xR\2", "hexadecimal bfloat literals (4 digits, as a half's)"),
    (r"\bf0x([0-9A-Fa-f]+)\b", _old_hex_literal, "hexadecimal float literals"),
    (r"\b(float) (-?[0-9]+\.[0-9]+e[-+][0-9]+)\b", _old_float_decimal, "shortest-decimal float literals"),
    (r"\bbfloat ((?:%[-\w.]+, )?)(-?[0-9]+\.[0-9]+e[-+][0-9]+)\b", _old_bfloat_decimal, "bfloat decimal literals"),
    # as the first operand after its type, or as the second (``fcmp oeq float %x, -inf``)
    (r"\b(half|bfloat|float|double) ((?:%[-\w.]+, )?)([-+]?(?:inf|q?nan))\b", _old_special_literal, "infinity and NaN literals"),
]


def make_llc_compatible(llvm_ir: str) -> str:
    for pattern, replacement, _why in LLC_COMPAT_REWRITES:
        llvm_ir = re.sub(pattern, replacement, llvm_ir)
    return llvm_ir


# llc's schedulers track the memory operations of a basic block in maps that every new
# one is checked against, past this many reduced (the dependences made coarser): at LLVM's
# default of 1000 the fully unrolled blocks of small convolutions (3,500 instructions in
# DenseNet's 7x7 layers) took 4.3 s of llc each, 74 of DenseNet's 80 s; at 200 they
# take 0.6 s and their code is the same. Past 200 the schedulers' order can change
# (Inception v2: llc 33 -> 8 s, its conv kernels' instructions in another order; DenseNet
# only in its entry's spills and one pool kernel). DenseNet's AVX2 code has no such blocks
# (llc 5.9 -> 5.7 s).
LLC_FLAGS = ("--dag-maps-huge-region=200",)

# Modules of LLVM IR text at least this big are compiled in pieces, in parallel
# (``llvm-split``, then ``opt`` + ``llc`` per piece, ``ld -r`` joins the objects).
SPLIT_IR_CHARS = 4_000_000


def _compile_pieces(text: str, pieces: int, opt: str, llc: str, split: str, opt_level: int, flags, output: str):
    """Split the module's functions among ``pieces`` modules (the module-local symbols
    become hidden globals), compile them in parallel and join the objects."""
    with tempfile.TemporaryDirectory(prefix="dnnf-split-") as tmp:
        source = os.path.join(tmp, "module.ll")
        with open(source, "w") as f:
            f.write(text)
        proc = subprocess.run([split, f"-j{pieces}", "-o", os.path.join(tmp, "piece"), source], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CodegenError(f"{os.path.basename(split)} failed:\n{proc.stderr.strip()}")
        names = [os.path.join(tmp, f"piece{i}") for i in range(pieces)]
        errors = []

        def build(name):
            for cmd in (
                [opt, f"-O{opt_level}", "-o", name + ".bc", name] + flags,
                [llc, f"-O{opt_level}", *LLC_FLAGS, "-filetype=obj", "-o", name + ".o", name + ".bc"] + flags,
            ):
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    errors.append(f"{os.path.basename(cmd[0])} failed:\n{proc.stderr.strip()}")
                    return

        threads = [threading.Thread(target=build, args=(name,)) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise CodegenError(errors[0])
        proc = subprocess.run(["ld", "-r", "-o", output] + [name + ".o" for name in names], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CodegenError(f"ld -r failed:\n{proc.stderr.strip()}")


def compile_object(
    llvm_ir: str,
    triple: Optional[str] = None,
    *,
    target: "str | CpuTarget | None" = None,
    cpu: Optional[str] = None,
    features: Optional[str] = None,
    output: Optional[str] = None,
    opt_level: int = 3,
    assembly: bool = False,
    pic: bool = False,
) -> str:
    """Compile LLVM IR text to an object file (or assembly); returns its path.

    ``opt -O<opt_level>`` (LLVM's middle end: the same optimization the JIT runs --
    ``llc`` alone would keep, e.g., the one-iteration loops of strided transfers)
    then ``llc -O<opt_level>``. The triple, CPU and features default to those of
    ``target``.
    """
    llc = find_llc()
    if llc is None:
        raise CodegenError("llc not found (install llvm-22, or set DNNF_LLC)")
    t = get_target(target) if target is not None else None
    triple = triple or (t.triple if t else None)
    cpu = cpu if cpu is not None else (t.cpu if t else None)
    features = features if features is not None else (t.llvm_features if t else None)
    if output is None:
        fd, output = tempfile.mkstemp(suffix=".s" if assembly else ".o", prefix="dnnf-")
        os.close(fd)
    flags = []
    if triple:
        flags.append(f"-mtriple={triple}")
    if cpu:
        flags.append(f"-mcpu={cpu}")
    if features:
        flags.append(f"-mattr={features}")
    if pic:  # the object goes into a shared library
        flags.append("-relocation-model=pic")
    text = make_llc_compatible(llvm_ir)
    opt = find_opt()
    split = find_llvm_split()
    pieces = 2 if len(text) >= SPLIT_IR_CHARS and (os.cpu_count() or 1) > 1 else 1
    if (
        pieces > 1
        and opt is not None
        and opt_level > 0
        and split is not None
        and not assembly
        and shutil.which("ld")
        and (triple is None or triple == get_target("host").triple)
    ):
        _compile_pieces(text, pieces, opt, llc, split, opt_level, flags, output)
        return output
    data = text.encode()
    if opt is not None and opt_level > 0:
        # bitcode between opt and llc: printing and parsing big modules as text is slow
        proc = subprocess.run([opt, f"-O{opt_level}", "-o", "-", "-"] + flags, input=data, capture_output=True)
        if proc.returncode != 0:
            raise CodegenError(f"{os.path.basename(opt)} failed:\n{proc.stderr.decode(errors='replace').strip()}")
        data = proc.stdout
    cmd = [llc, f"-O{opt_level}", *LLC_FLAGS, "-filetype=" + ("asm" if assembly else "obj"), "-o", output, "-"] + flags
    proc = subprocess.run(cmd, input=data, capture_output=True)
    if proc.returncode != 0:
        raise CodegenError(f"{os.path.basename(llc)} failed:\n{proc.stderr.decode(errors='replace').strip()}")
    return output



__all__ = ["LLC_COMPAT_REWRITES", "SPLIT_IR_CHARS", "compile_object", "emit_llvm_ir", "make_llc_compatible"]
