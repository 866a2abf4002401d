"""``dnnf-int8-matmuls``: integer matmuls of bytes by constant byte weights on AVX512-VNNI.

The importer computes MatMulInteger's and QLinearMatMul's int32 product as an f32
matmul of ``float(a - a_zero)`` by the centered weights (exact while the sums stay
within f32's integers: ``quantization_converters``), the conversion a kernel of its
own. That runs at the FMA's peak but onnxruntime's VNNI kernel does four times its
multiply-adds an instruction (measured, Zen 4, 1 thread, 128 x 256 u8 by 256 x 256 s8:
0.151 ms against 0.044). Where the CPU has ``avx512vnni``, this pass finds each 2-D
f32 ``linalg.matmul`` (its accumulator a fill of zero) whose

* A is a kernel argument that every call passes from a kernel computing
  ``float(b - offset)`` of bytes ``b`` (``byte_offsets.byte_offset``, the same offset
  for every call), and
* B is constant (``ConstantFilters``) with integer values in -128 ... 127,

and computes it by ``vnni_matmul`` from the bytes themselves (the calls pass them; the
conversion kernel goes when nothing else reads it) and B packed at compile time, the
offset folded into the accumulators' start; the i32 product is converted to f32 for
the matmul's consumers (the importer's cast back to int32 included), which is exact as
the f32 product was. Other CPUs keep the f32 matmul.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import LAUNCHED_ATTR, record_kernel_counts
from ...linalg_builders import generic
from ...transforms.registry import described_by_table
from ..constant_filters import ConstantFilters, calls_by_callee, erase_if_unused, replace_convolution, retype_argument
from ..errors import CodegenError
from ..linalg_queries import has_default_maps, is_f32, linalg_ops, producer, static_tensor_type
from ..lower_pass import TargetPass
from ..lowered_module import DECLARED_TYPE_ATTR, symbol_name
from .byte_offsets import ByteOffset, byte_offset
from .target import CpuTarget
from .vnni_matmul import declare_dot, packed_weights, vnni_matmul

VNNI_FEATURE = "avx512vnni"
# The deepest product whose i32 sums cannot wrap: K products of up to 255 * 128, and the
# zero point's correction (up to as much again).
MAX_DEPTH = (2 ** 31 - 1) // (2 * 255 * 128)


class ByteMatmul(NamedTuple):
    """A matmul this pass rewrites: its kernel, A's argument, the kernel's calls and the
    conversions of bytes each passes (one function for all, and what it computes), and B."""

    function: ir.Operation
    index: int
    calls: list
    conversions: list
    converter: ir.Operation
    offset: ByteOffset
    weights: ConstantFilters


def _is_zero_fill(value) -> bool:
    fill = producer(value)
    if fill is None or fill.name != "linalg.fill":
        return False
    scalar = producer(fill.operands[0])
    return (scalar is not None and scalar.name == "arith.constant"
            and ir.FloatAttr(scalar.attributes["value"]).value == 0.0)


def _kernel_argument(value):
    """(the kernel ``func.func``, the argument's index) when ``value`` is an argument of
    one that reads it only once, else None."""
    if not isinstance(value, ir.BlockArgument) or len(list(value.uses)) != 1:
        return None
    function = value.owner.owner.operation
    if function.name != "func.func" or value.owner != function.regions[0].blocks[0]:
        return None
    return function, value.arg_number


def _declared_input(function) -> ir.Type | None:
    """The type the signature recorded for the caller of ``function`` gives its first argument, if any."""
    if DECLARED_TYPE_ATTR not in function.attributes:
        return None
    return ir.FunctionType(ir.TypeAttr(function.attributes[DECLARED_TYPE_ATTR]).value).inputs[0]


def _conversions(calls: list, index: int, functions: dict):
    """(the calls' ``func.call`` conversions of bytes into their argument ``index``, the
    function they call, the ``ByteOffset`` it computes), or None: one function for all."""
    conversions, callees = [], set()
    for call in calls:
        conversion = producer(call.operands[index])
        if conversion is None or conversion.name != "func.call":
            return None
        callee = functions.get(ir.FlatSymbolRefAttr(conversion.attributes["callee"]).value)
        offset = byte_offset(callee) if callee is not None else None
        if offset is None:
            return None
        conversions.append(conversion)
        callees.add(symbol_name(callee))
    return (conversions, callee, offset) if len(callees) == 1 else None


def _signed_bytes(arrays: list) -> bool:
    return all(np.array_equal(a, np.rint(a)) and a.min(initial=0) >= -128 and a.max(initial=0) <= 127 for a in arrays)


def byte_matmul(op, calls: dict, functions: dict) -> Optional[ByteMatmul]:
    """What ``dnnf-int8-matmuls`` needs to rewrite ``op``, when it can (see the module docstring)."""
    if op.name != "linalg.matmul" or not has_default_maps(op):
        return None
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or t.rank != 2 or not is_f32(t) for t in types) or types[0].shape[1] > MAX_DEPTH:
        return None
    if not _is_zero_fill(op.operands[2]):
        return None
    argument = _kernel_argument(op.operands[0])
    if argument is None:
        return None
    function, index = argument
    kernel_calls = calls.get(symbol_name(function), [])
    found = _conversions(kernel_calls, index, functions) if kernel_calls else None
    if found is None:
        return None
    weights = ConstantFilters(op, calls, recorded_signatures=True)
    if not weights.constant() or not _signed_bytes(weights.arrays()):
        return None
    return ByteMatmul(function, index, kernel_calls, *found, weights)


def _pass_bytes(found: ByteMatmul) -> ir.Value:
    """Let every call pass the bytes, not their conversion (erased when nothing else reads it):
    A's argument, retyped."""
    byte_type = found.conversions[0].operands[0].type
    declared = _declared_input(found.converter)
    distinct = []
    for call, conversion in zip(found.calls, found.conversions, strict=True):
        call.operands[found.index] = conversion.operands[0]
        if not any(conversion == seen for seen in distinct):
            distinct.append(conversion)
    for conversion in distinct:
        erase_if_unused(conversion)
    retype_argument(found.function, found.index, byte_type, declared)
    return found.function.regions[0].blocks[0].arguments[found.index]


def int8_matmuls(module_op, target: CpuTarget) -> int:
    """Rewrite the byte matmuls of ``module_op`` (see the module docstring) when ``target``
    has ``avx512vnni``; returns how many."""
    if VNNI_FEATURE not in target.features:
        return 0
    calls = calls_by_callee(module_op.operation)
    functions = {symbol_name(f): f for f in walk_ops(module_op.operation, ("func.func",))}
    count, converters = 0, set()
    for op in linalg_ops(module_op.operation):
        found = byte_matmul(op, calls, functions)
        if found is None:
            continue
        converters.add(symbol_name(found.converter))
        n = static_tensor_type(op.results[0]).shape[1]
        shift = 128 if found.offset.signed else 0  # signed bytes read as unsigned ones, b + 128
        with op.location:
            declare_dot(module_op.body)
            packed = found.weights.transformed(lambda w: packed_weights(w, found.offset.offset + shift))
            a = _pass_bytes(found)
            with ir.InsertionPoint(op):
                product = vnni_matmul(a, packed, n, found.offset.signed)
                shape = static_tensor_type(op.results[0]).shape
                identity = ir.AffineMap.get_identity(2)
                floats = generic([product], [identity, identity], [_mlir.tensor.empty(shape, ir.F32Type.get())],
                                 lambda x, _out: _mlir.arith.sitofp(ir.F32Type.get(), x))[0]
        replace_convolution(op, floats)
        count += 1
    remaining = calls_by_callee(module_op.operation)
    for name in converters - set(remaining):
        functions[name].erase()
    if count and LAUNCHED_ATTR in module_op.operation.attributes:
        record_kernel_counts(module_op.operation)
    return count


@described_by_table
class Int8MatmulsPass(TargetPass):
    """``int8_matmuls`` as a pass."""

    NAME = "dnnf-int8-matmuls"

    def lower(self, module, target, threads: int):
        if not isinstance(target, CpuTarget):
            raise CodegenError(f"target '{target.name}' is not a CPU")
        int8_matmuls(module, target)


__all__ = ["MAX_DEPTH", "ByteMatmul", "Int8MatmulsPass", "VNNI_FEATURE", "byte_matmul", "int8_matmuls"]
