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
the f32 product was. Other CPUs keep the f32 matmul. The kernel records the FLOPs it
now does as byte dot products (``INT8_FLOPS_ATTR``), for the profiler's roofline.

QLinearConv's and ConvInteger's f32 ``linalg.conv_2d_nchw_fchw`` is the same product
over the windows of its input (``byte_windows``): where its input is such an argument,
or a zero ``tensor.pad`` of one, the bytes are padded with the offset's byte (whose
conversion is that zero), each output pixel's window becomes one row of bytes, and
``vnni_matmul`` writes the product transposed (channels by pixels: NCHW). Measured (Zen
4, 1 thread, 1x64x28x28 u8 by 64x64x3x3 s8, pad 1): 0.16 ms, onnxruntime 0.15, the f32
convolution it replaces 0.58. The pass runs before ``dnnf-winograd`` and
``dnnf-channel-panels``, which would take the f32 convolution first.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import INT8_FLOPS_ATTR, LAUNCHED_ATTR, record_kernel_counts
from ...linalg_builders import generic, make_pad
from ...transforms.registry import described_by_table
from ..constant_filters import ConstantFilters, calls_by_callee, erase_if_unused, replace_convolution, retype_argument
from ..errors import CodegenError
from ..linalg_queries import (conv_params, element_bits, has_default_maps, is_f32, linalg_ops, pad_value, producer,
                              static_tensor_type)
from ..lower_pass import TargetPass
from ..lowered_module import DECLARED_TYPE_ATTR, symbol_name
from .byte_offsets import ByteOffset, byte_offset
from .byte_windows import filter_matrix, nchw_result, nhwc, window_rows
from .features import VNNI_FEATURE
from .target import CpuTarget
from .vnni_matmul import declare_dot, packed_weights, vnni_matmul

# The deepest product whose i32 sums cannot wrap: K products of up to 255 * 128, and the
# zero point's correction (up to as much again).
MAX_DEPTH = (2 ** 31 - 1) // (2 * 255 * 128)
CONV = "linalg.conv_2d_nchw_fchw"
RANKS = {"linalg.matmul": 2, CONV: 4}


class ByteMatmul(NamedTuple):
    """A matmul or convolution this pass rewrites: its kernel, A's argument, the kernel's
    calls and the conversions of bytes each passes (one function for all, and what it
    computes), B, and the convolution's zero ``tensor.pad`` of A (None: none)."""

    function: ir.Operation
    index: int
    calls: list
    conversions: list
    converter: ir.Operation
    offset: ByteOffset
    weights: ConstantFilters
    padding: Optional[ir.Operation]


def _is_zero(scalar) -> bool:
    """Whether ``scalar`` is an ``arith.constant`` zero (f32 or integer)."""
    if scalar is None or scalar.name != "arith.constant":
        return False
    value = scalar.attributes["value"]
    return (ir.FloatAttr(value).value if isinstance(value, ir.FloatAttr) else ir.IntegerAttr(value).value) == 0


def _is_zero_fill(value) -> bool:
    fill = producer(value)
    return fill is not None and fill.name == "linalg.fill" and _is_zero(producer(fill.operands[0]))


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


def _byte_input(op):
    """(the value A's bytes reach ``op`` as, the convolution's zero ``tensor.pad`` of it or
    None), or None when a convolution pads with anything else."""
    pad = producer(op.operands[0])
    if op.name != CONV or pad is None or pad.name != "tensor.pad":
        return op.operands[0], None
    return (pad.operands[0], pad) if len(pad.operands) == 1 and _is_zero(pad_value(pad)) else None


def _depth(op, types: list) -> int:
    """The products a result element sums: K, or a convolution's C * KH * KW."""
    return int(np.prod(types[1].shape[1:])) if op.name == CONV else types[0].shape[1]


def _padding_byte(offset: ByteOffset) -> bool:
    """Whether some byte is ``offset`` (what a zero of ``float(b - offset)`` pads as)."""
    return (-128 if offset.signed else 0) <= offset.offset <= (127 if offset.signed else 255)


def _computed_in(t, op) -> bool:
    """Whether the tensor type ``t`` holds f32, or (a convolution: the importer's exact one
    where f32 sums could round) i32."""
    return is_f32(t) or (op.name == CONV and element_bits(t) == 32 and isinstance(t.element_type, ir.IntegerType))


def byte_matmul(op, calls: dict, functions: dict) -> Optional[ByteMatmul]:
    """What ``dnnf-int8-matmuls`` needs to rewrite ``op``, when it can (see the module docstring)."""
    rank = RANKS.get(op.name)
    if rank is None or (op.name == "linalg.matmul" and not has_default_maps(op)):
        return None
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or t.rank != rank or not _computed_in(t, op) for t in types) or _depth(op, types) > MAX_DEPTH:
        return None
    byte_input = _byte_input(op)
    if byte_input is None or not _is_zero_fill(op.operands[2]):
        return None
    value, padding = byte_input
    argument = _kernel_argument(value)
    if argument is None:
        return None
    function, index = argument
    kernel_calls = calls.get(symbol_name(function), [])
    found = _conversions(kernel_calls, index, functions) if kernel_calls else None
    if found is None or (padding is not None and not _padding_byte(found[2])):
        return None
    weights = ConstantFilters(op, calls, recorded_signatures=True)
    if not weights.constant() or not _signed_bytes(weights.arrays()):
        return None
    return ByteMatmul(function, index, kernel_calls, *found, weights, padding)


def _padded_bytes(a, found: ByteMatmul):
    """The bytes ``a`` padded as the convolution's f32 input was, with the byte whose
    conversion is zero (the offset)."""
    pad = found.padding
    if pad is None:
        return a
    i8 = ir.IntegerType.get_signless(8)
    byte = _mlir.arith.constant(i8, (found.offset.offset + 128) % 256 - 128)
    low, high = ([nchw[i] for i in (0, 2, 3, 1)] for nchw in (
        list(ir.DenseI64ArrayAttr(pad.attributes[side])) for side in ("static_low", "static_high")))
    return make_pad(a, low, high, byte)


def _product(op, found: ByteMatmul):
    """The i32 product computed by ``vnni_matmul`` (B packed, A's bytes passed) and converted
    to the f32 tensor that replaces ``op``, inserted before it."""
    shape, kernel = static_tensor_type(op.results[0]).shape, static_tensor_type(op.operands[1]).shape[2:]
    shift = 128 if found.offset.signed else 0  # signed bytes read as unsigned ones, b + 128
    matrix = filter_matrix if op.name == CONV else np.asarray
    packed = found.weights.transformed(lambda w: packed_weights(matrix(w), found.offset.offset + shift))
    a = _pass_bytes(found)
    if op.name == CONV:
        strides, dilations = conv_params(op)
        rows = window_rows(_padded_bytes(nhwc(a), found), kernel, shape[2:], strides, dilations)
        element = static_tensor_type(op.results[0]).element_type
        return nchw_result(vnni_matmul(rows, packed, shape[1], found.offset.signed, transposed=True), shape, element)
    product = vnni_matmul(a, packed, shape[1], found.offset.signed)
    identity, f32 = ir.AffineMap.get_identity(2), ir.F32Type.get()
    return generic([product], [identity, identity], [_mlir.tensor.empty(shape, f32)],
                   lambda x, _out: _mlir.arith.sitofp(f32, x))[0]


def _record_int8_flops(op, function) -> None:
    """Add ``op``'s FLOPs (two a multiply-add) to the ``INT8_FLOPS_ATTR`` of its kernel ``function``."""
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    flops = 2 * int(np.prod(types[2].shape)) * _depth(op, types)
    if INT8_FLOPS_ATTR in function.attributes:
        flops += ir.IntegerAttr(function.attributes[INT8_FLOPS_ATTR]).value
    function.attributes[INT8_FLOPS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64, op.context), flops)


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
    """Rewrite the byte matmuls and convolutions of ``module_op`` (see the module docstring)
    when ``target`` has ``avx512vnni``; returns how many."""
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
        _record_int8_flops(op, found.function)
        with op.location:
            declare_dot(module_op.body)
            with ir.InsertionPoint(op):
                floats = _product(op, found)
        replace_convolution(op, floats)
        erase_if_unused(found.padding)
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


__all__ = ["MAX_DEPTH", "ByteMatmul", "Int8MatmulsPass", "byte_matmul", "int8_matmuls"]
