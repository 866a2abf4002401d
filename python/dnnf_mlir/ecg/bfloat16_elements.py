"""Reading a bf16 or float8 ``dense<...>`` elements attribute into numpy.

MLIR's Python bindings give no buffer for bf16 and float8 elements (numpy has neither),
so the values are read as their i16 or i8 bit patterns: ``arith.bitcast`` of the
constant, folded by the canonicalizer, is an integer attribute with the same bits.
"""

import numpy as np

from .._mlir import arith, func, ir, passmanager
from .tensor_spec import from_mlir


def bfloat16_array(attr: ir.DenseElementsAttr) -> np.ndarray:
    """The elements of a bf16 or float8 tensor attribute that is not a splat, as an ml_dtypes array."""
    with attr.context, ir.Location.unknown():
        source = ir.RankedTensorType(attr.type)
        width = source.element_type.width
        bits = ir.RankedTensorType.get(source.shape, ir.IntegerType.get_signless(width))
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("bits", ir.FunctionType.get([], [bits]))
            with ir.InsertionPoint(function.add_entry_block()):
                func.ReturnOp([arith.bitcast(bits, arith.ConstantOp(source, attr).result)])
        passmanager.PassManager.parse("builtin.module(func.func(canonicalize))").run(module.operation)
    folded = ir.DenseIntElementsAttr(function.entry_block.operations[0].attributes["value"])
    dtype = from_mlir(source).dtype
    return np.asarray(folded).view(np.dtype(f"int{width}")).reshape(source.shape).view(dtype)


def elements_array(attr: ir.DenseElementsAttr) -> np.ndarray:
    """The elements of a dense attribute that is not a splat, bf16 and float8 included (numpy's view otherwise)."""
    if is_bits_only(ir.ShapedType(attr.type).element_type):
        return bfloat16_array(attr)
    return np.asarray(attr)


def is_bits_only(element: ir.Type) -> bool:
    """Whether MLIR gives the elements of this type only as bits: bf16 and the float8 types."""
    return isinstance(element, ir.FloatType) and element.width <= 16 and not isinstance(element, ir.F16Type)
