"""Attribute kinds of ECG ops: annotation markers that map Python values to MLIR.

An op field annotated with one of these classes becomes an attribute; the marker
supplies its IRDL constraint, its conversion to and from Python values, and the
check its op's verifier runs (IRDL itself cannot name dense arrays or elements).
"""

from typing import Any

import numpy as np

from .._mlir import ir
from .bfloat16_elements import bfloat16_array, is_bits_only
from .tensor_spec import TensorSpec, dtype_name, element_type, from_mlir, to_mlir


class AttributeKind:
    """Base of the markers; subclasses define how a value is stored."""

    constraint = Any
    description = ""

    @staticmethod
    def to_attr(value) -> ir.Attribute:
        raise NotImplementedError

    @staticmethod
    def from_attr(attr: ir.Attribute):
        raise NotImplementedError

    @staticmethod
    def accepts(attr: ir.Attribute) -> bool:
        raise NotImplementedError


class Int(AttributeKind):
    constraint = ir.IntegerAttr
    description = "64-bit integer"

    @staticmethod
    def to_attr(value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))

    @staticmethod
    def from_attr(attr):
        return ir.IntegerAttr(attr).value

    @staticmethod
    def accepts(attr):
        return isinstance(attr, ir.IntegerAttr) and isinstance(attr.type, ir.IntegerType) and attr.type.width == 64


class Float(AttributeKind):
    constraint = ir.FloatAttr
    description = "64-bit float"

    @staticmethod
    def to_attr(value):
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))

    @staticmethod
    def from_attr(attr):
        return ir.FloatAttr(attr).value

    @staticmethod
    def accepts(attr):
        return isinstance(attr, ir.FloatAttr)


class Str(AttributeKind):
    constraint = ir.StringAttr
    description = "string"

    @staticmethod
    def to_attr(value):
        return ir.StringAttr.get(str(value))

    @staticmethod
    def from_attr(attr):
        return ir.StringAttr(attr).value

    @staticmethod
    def accepts(attr):
        return isinstance(attr, ir.StringAttr)


class Ints(AttributeKind):
    description = "array<i64>"

    @staticmethod
    def to_attr(value):
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])

    @staticmethod
    def from_attr(attr):
        return list(ir.DenseI64ArrayAttr(attr))

    @staticmethod
    def accepts(attr):
        return isinstance(attr, ir.DenseI64ArrayAttr)


class Elements(AttributeKind):
    """A constant tensor; large ones are written as dense resources by ``asm``."""

    description = "dense elements"

    @staticmethod
    def to_attr(value):
        array = np.asarray(value)
        if array.size > 1 and not any(array.strides):  # a broadcast scalar: a splat, not materialized
            return ir.DenseElementsAttr.get(np.ascontiguousarray(array.reshape(-1)[:1]),
                                            type=to_mlir(TensorSpec.of(array)))
        array = np.require(array, requirements="C")
        return ir.DenseElementsAttr.get(array, type=to_mlir(TensorSpec.of(array)))

    @staticmethod
    def from_attr(attr):
        spec = from_mlir(ir.DenseElementsAttr(attr).type)
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            return np.full(spec.shape, _splat_value(dense.get_splat_value(), spec), dtype=spec.dtype)
        if is_bits_only(dense.type.element_type):
            return bfloat16_array(dense)
        if spec.dtype == np.bool_:
            return np.array([bool(x) for x in ir.DenseIntElementsAttr(attr)], dtype=np.bool_).reshape(spec.shape)
        cls = ir.DenseFPElementsAttr if spec.is_float else ir.DenseIntElementsAttr
        return np.asarray(cls(attr)).view(spec.dtype).reshape(spec.shape)

    @staticmethod
    def accepts(attr):
        return isinstance(attr, ir.DenseElementsAttr)


def _splat_value(attr, spec: TensorSpec):
    if spec.is_float:
        return ir.FloatAttr(attr).value
    if spec.dtype == np.bool_:
        return bool(ir.IntegerAttr(attr).value)
    integer = ir.IntegerAttr(attr)
    return integer.value if spec.dtype.kind == "i" else int(np.array(integer.value).astype(spec.dtype))


__all__ = ["AttributeKind", "Int", "Float", "Str", "Ints", "Elements", "dtype_name", "element_type"]
