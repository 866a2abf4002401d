"""Reading a bf16 ``dense<...>`` elements attribute into numpy.

MLIR's Python bindings give no buffer for bf16 elements (numpy has no bfloat16), so
the values are read as their i16 bit patterns: ``arith.bitcast`` of the constant,
folded by the canonicalizer, is an i16 attribute with the same bits.
"""

import numpy as np

from .._mlir import arith, func, ir, passmanager
from .tensor_spec import BFLOAT16


def bfloat16_array(attr: ir.DenseElementsAttr) -> np.ndarray:
    """The elements of a bf16 tensor attribute that is not a splat, as an ml_dtypes.bfloat16 array."""
    with attr.context, ir.Location.unknown():
        source = ir.RankedTensorType(attr.type)
        bits = ir.RankedTensorType.get(source.shape, ir.IntegerType.get_signless(16))
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("bits", ir.FunctionType.get([], [bits]))
            with ir.InsertionPoint(function.add_entry_block()):
                func.ReturnOp([arith.bitcast(bits, arith.ConstantOp(source, attr).result)])
        passmanager.PassManager.parse("builtin.module(func.func(canonicalize))").run(module.operation)
    folded = ir.DenseIntElementsAttr(function.entry_block.operations[0].attributes["value"])
    return np.asarray(folded).view(np.int16).reshape(source.shape).view(BFLOAT16)


def elements_array(attr: ir.DenseElementsAttr) -> np.ndarray:
    """The elements of a dense attribute that is not a splat, bf16 included (numpy's view otherwise)."""
    if isinstance(ir.ShapedType(attr.type).element_type, ir.BF16Type):
        return bfloat16_array(attr)
    return np.asarray(attr)
