"""How the OpenCL printer holds fp16 values (``--precision fp16``, ``gpu/precision.py``).

OpenCL 1.2's core has ``half`` only as the pointee of a buffer, read and written through
``vload_half`` / ``vstore_half_rte`` (and their vector forms), which convert to and from
``float``: a kernel that only moves f16 values (loads, stores, ``extf`` / ``truncf``, and
ops exact on any float such as selects, lane shuffles, comparisons and maxima) holds them
as ``float`` and needs no extension, so it runs on devices without ``cl_khr_fp16`` (PoCL).
A kernel computing in half (an ``addf`` on f16, a workgroup array of f16) is printed with
``half`` values under ``#pragma OPENCL EXTENSION cl_khr_fp16``, and the program requires
the extension, which the runtime checks against the device's (``dnnf_opencl.c``).
"""

from __future__ import annotations

from ...._mlir import ir

EXTENSION = "cl_khr_fp16"
PRAGMA = f"#pragma OPENCL EXTENSION {EXTENSION} : enable"

# Ops whose f16 results are the same computed on the f16 values widened to float: they move
# or compare values, or their result is one of their operands (a truncf rounds to half).
EXACT_IN_FLOAT = frozenset((
    "memref.load", "memref.store", "vector.load", "vector.store", "memref.subview", "memref.reinterpret_cast",
    "arith.extf", "arith.truncf", "arith.constant", "arith.select", "arith.cmpf", "arith.negf", "math.absf",
    "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "vector.broadcast", "vector.splat",
    "vector.extract", "vector.insert", "vector.from_elements", "vector.to_elements", "ub.poison", "scf.for", "scf.if",
    "scf.yield",
))


def is_half(t: ir.Type) -> bool:
    """Whether ``t`` is f16, a vector of f16 or a memref of either."""
    if isinstance(t, ir.MemRefType):
        t = ir.MemRefType(t).element_type
    if isinstance(t, ir.VectorType):
        t = ir.VectorType(t).element_type
    return isinstance(t, ir.F16Type)


def _computes_in_half(op: ir.Operation) -> bool:
    values = [*op.operands, *op.results]
    if op.name in ("memref.alloc", "memref.alloca"):
        return is_half(op.results[0].type)  # a private or workgroup array of half
    return op.name not in EXACT_IN_FLOAT and any(is_half(v.type) for v in values)


def needs_half_arithmetic(function: ir.Operation) -> bool:
    """Whether the ``gpu.func`` ``function`` computes in half (see the module docstring)."""
    pending = [function]
    while pending:
        op = pending.pop()
        if op is not function and _computes_in_half(op):
            return True
        for region in op.regions:
            for block in region.blocks:
                pending.extend(o.operation for o in block.operations)
    return False


__all__ = ["EXACT_IN_FLOAT", "EXTENSION", "PRAGMA", "is_half", "needs_half_arithmetic"]
