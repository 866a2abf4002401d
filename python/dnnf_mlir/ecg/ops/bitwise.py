"""One-to-One bitwise ops on integer tensors: and, or, xor (numpy broadcasting) and not.

They share the element-wise families' result-type inference, verification and
reference semantics; each sets its numpy function and its algebra (which lets the
rewrites reassociate, commute and distribute them as they do the logical ops).
"""

import numpy as np

from ..properties import Algebra
from ..shapes import require
from ..tensor_spec import dtype_name
from .elementwise import BinaryElementwise, UnaryElementwise


class BitwiseAndOp(BinaryElementwise, name="bitwise_and"):
    """x & y; distributes over or, identity all ones (not expressible as a float: none given)."""

    OPERAND_KINDS = "iu"
    ONNX = ("BitwiseAnd",)
    ALGEBRA = Algebra(commutative=True, associative=True, distributes_over=("bitwise_or",), absorbing=0.0)
    compute = staticmethod(np.bitwise_and)


class BitwiseOrOp(BinaryElementwise, name="bitwise_or"):
    """x | y; distributes over and."""

    OPERAND_KINDS = "iu"
    ONNX = ("BitwiseOr",)
    ALGEBRA = Algebra(commutative=True, associative=True, distributes_over=("bitwise_and",), identity=0.0)
    compute = staticmethod(np.bitwise_or)


class BitwiseXorOp(BinaryElementwise, name="bitwise_xor"):
    """x ^ y."""

    OPERAND_KINDS = "iu"
    ONNX = ("BitwiseXor",)
    ALGEBRA = Algebra(commutative=True, associative=True, identity=0.0)
    compute = staticmethod(np.bitwise_xor)


class BitwiseNotOp(UnaryElementwise, name="bitwise_not"):
    """~x; De Morgan: ~(a & b) == ~a | ~b and ~(a | b) == ~a & ~b."""

    ONNX = ("BitwiseNot",)
    FLOAT_ONLY = False
    ALGEBRA = Algebra(commutes_with=UnaryElementwise.ALGEBRA.commutes_with,
                      morphisms=(("bitwise_and", "bitwise_or"), ("bitwise_or", "bitwise_and")))
    compute = staticmethod(np.invert)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(x.dtype.kind in "iu", f"operand must have an integer element type, not {dtype_name(x.dtype)}")
        return [x]
