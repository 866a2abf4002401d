"""The op groups the rule generators range over, read from the ops' declarations."""

from ...ecg import OPS
from ...ecg.ops.elementwise import BinaryElementwise, UnaryElementwise
from ...ecg.properties import UNARY_ELEMENTWISE


def _count(cls, kind: str) -> int:
    return sum(1 for field in cls._fields if type(field).__name__ == kind)


def unary_ops() -> list:
    """Single-operand elementwise ops: they commute with every data-movement op."""
    return [
        name for name, cls in OPS.items()
        if cls.MAPPING.value == "One-to-One" and _count(cls, "OperandDef") == 1
        and {"Reorganize", "Shuffle"} <= set(cls.ALGEBRA.commutes_with)
    ]


def morphisms() -> list:
    """(f, inner, outer) for every unary op f with f(inner(a, b)) == outer(f(a), f(b))."""
    return [(name, inner, outer) for name, cls in OPS.items() for inner, outer in cls.ALGEBRA.morphisms]


def movement_ops() -> list:
    """Data-movement ops with one moved operand (and maybe indices) that declare they
    commute with every unary elementwise op."""
    return [
        name for name, cls in OPS.items()
        if cls.ALGEBRA.commutes_with == (UNARY_ELEMENTWISE,) and _count(cls, "OperandDef") <= 2 and _count(cls, "ResultDef") == 1
        and name != "concat"
    ]


def shrinks(mnemonic: str) -> bool:
    """Whether elementwise work is cheaper after the movement op (it selects elements)."""
    return mnemonic in ("slice", "gather", "gather_elements")


def associative_ops() -> list:
    """Binary ops that are associative and commutative."""
    return [name for name, cls in OPS.items() if cls.ALGEBRA.associative and cls.ALGEBRA.commutative]


def inverse_ops() -> list:
    """(op, base) for binary ops that undo ``base`` (sub undoes add, div mul)."""
    return [(name, cls.ALGEBRA.inverse_of) for name, cls in OPS.items() if cls.ALGEBRA.inverse_of]


def distributions() -> list:
    """(op, over) for every declared distributivity."""
    return [(name, over) for name, cls in OPS.items() for over in cls.ALGEBRA.distributes_over]


def is_commutative(mnemonic: str) -> bool:
    return OPS[mnemonic].ALGEBRA.commutative


def is_elementwise_binary(mnemonic: str) -> bool:
    return issubclass(OPS[mnemonic], BinaryElementwise)


def is_unary_elementwise(mnemonic: str) -> bool:
    return issubclass(OPS[mnemonic], UnaryElementwise)
