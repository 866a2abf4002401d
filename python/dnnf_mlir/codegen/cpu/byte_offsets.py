"""What a kernel that turns bytes into floats computes: ``float(b - offset)``.

The importer computes an integer product (MatMulInteger, QLinearMatMul) as an f32
matmul of ``float(a - a_zero)``, and fusion puts that conversion in a kernel of its own
(``cast``, ``sub``, ``cast``). ``byte_offset`` tells, for such a kernel function, whether
it maps every byte ``b`` of its one i8 argument to ``b - offset`` (``b`` read as
unsigned or as signed), by running its element-wise body on the 256 bytes: any
arrangement of the casts and the subtraction (one generic or three) is recognised, and
anything else (a scale, a clamp, a rounding) is not. A convolution too deep for f32's
exact sums gets ``b - offset`` in i32 (``quantization_converters``): recognised alike.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ..._mlir import ir
from ..linalg_queries import static_tensor_type


class ByteOffset(NamedTuple):
    """``float(b - offset)`` of each byte ``b``, read as signed when ``signed``."""

    signed: bool
    offset: int


def _width(value_type) -> int:
    return ir.IntegerType(value_type).width


def _signed(bits: np.ndarray, width: int) -> np.ndarray:
    return np.where(bits >= 1 << (width - 1), bits - (1 << width), bits)


def _scalar_constant(op) -> Optional[np.ndarray]:
    """The value of a 0-d or splat integer ``arith.constant`` as unsigned bits, else None."""
    attr = op.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return np.int64(ir.IntegerAttr(attr).value) % (1 << _width(attr.type))
    if isinstance(attr, ir.DenseIntElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
        splat = ir.DenseElementsAttr(attr).get_splat_value()
        return np.int64(ir.IntegerAttr(splat).value) % (1 << _width(splat.type))
    return None


def _scalar_step(op, values: dict) -> Optional[np.ndarray]:
    """One arith op of a generic's body on the values seen so far (integers as unsigned
    bits of their width, floats as float64), or None when it is not one of the casts,
    additions and subtractions a byte offset is made of."""
    name = op.name
    if name == "arith.constant":
        return _scalar_constant(op)
    args = [values.get(v) for v in op.operands]
    if any(a is None for a in args):
        return None
    result_type = op.results[0].type
    if name == "arith.extui":
        return args[0]
    if name == "arith.extsi":
        return _signed(args[0], _width(op.operands[0].type)) % (1 << _width(result_type))
    if name in ("arith.addi", "arith.subi"):
        total = args[0] + args[1] if name == "arith.addi" else args[0] - args[1]
        return total % (1 << _width(result_type))
    if name == "arith.uitofp":
        return args[0].astype(np.float64)
    if name == "arith.sitofp":
        return _signed(args[0], _width(op.operands[0].type)).astype(np.float64)
    return None


def _reads_whole(amap, known) -> bool:
    """Whether ``amap`` reads each element of a tensor (``known``: the bytes' values) at
    its own position, or a 0-d scalar (``known``: one value) everywhere."""
    if np.ndim(known) == 0:
        return len(amap.results) == 0
    return amap == ir.AffineMap.get_identity(amap.n_dims, context=amap.context)


def _run_generic(op, values: dict) -> Optional[np.ndarray]:
    """The result of an element-wise one-result ``linalg.generic`` whose inputs are the
    bytes' values or scalars, or None."""
    if len(op.results) != 1:
        return None
    inputs = list(op.operands)[:-1]
    maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
    block = op.regions[0].blocks[0]
    scalars = {}
    for value, amap, arg in zip(inputs, maps, block.arguments):
        known = values.get(value)
        if known is None or not _reads_whole(amap, known):
            return None
        scalars[arg] = known
    for inner in block.operations:
        if inner.name == "linalg.yield":
            return scalars.get(inner.operands[0])
        result = _scalar_step(inner, scalars)
        if result is None:
            return None
        scalars[inner.results[0]] = result
    return None


def byte_offset(function) -> Optional[ByteOffset]:
    """The ``ByteOffset`` the ``func.func`` ``function`` computes element by element from its
    one i8 tensor argument into its one f32 (or i32) tensor result of the same shape, or None."""
    block = function.regions[0].blocks[0]
    if len(block.arguments) != 1:
        return None
    source = static_tensor_type(block.arguments[0])
    if source is None or not isinstance(source.element_type, ir.IntegerType) or _width(source.element_type) != 8:
        return None
    values = {block.arguments[0]: np.arange(256, dtype=np.int64)}
    for op in block.operations:
        if op.name == "func.return":
            result = values.get(op.operands[0]) if len(op.operands) == 1 else None
            return _offset_of(result, static_tensor_type(op.operands[0]), source) if result is not None else None
        if op.name == "tensor.empty":
            continue
        if op.name == "arith.constant":
            value = _scalar_constant(op)
        elif op.name == "linalg.generic":
            value = _run_generic(op, values)
        else:
            value = None
        if value is None:
            return None
        values[op.results[0]] = value
    return None


def _offset_of(result: np.ndarray, shaped, source) -> Optional[ByteOffset]:
    """The ``ByteOffset`` the 256 values ``result`` (of the bytes 0 ... 255, into a tensor of
    type ``shaped``: floats, or i32 as unsigned bits) are, or None."""
    if shaped is None or shaped.shape != source.shape or np.ndim(result) != 1:
        return None
    if isinstance(shaped.element_type, ir.IntegerType) and _width(shaped.element_type) == 32 and result.dtype == np.int64:
        result = _signed(result, 32)
    elif not isinstance(shaped.element_type, ir.F32Type) or result.dtype != np.float64:
        return None
    bytes_ = np.arange(256)
    for signed in (False, True):
        read = _signed(bytes_, 8) if signed else bytes_
        offset = read[0] - result[0]
        if offset == int(offset) and np.array_equal(read - result, np.full(256, offset)):
            return ByteOffset(signed, int(offset))
    return None


__all__ = ["ByteOffset", "byte_offset"]
