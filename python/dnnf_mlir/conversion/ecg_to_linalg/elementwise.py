"""Elementwise math: unary, binary and ternary ECG ops as one ``linalg.generic`` each.

The body of every op is a table entry (``UNARY``, ``BINARY``) of scalar arith/math
builders; operands are broadcast the numpy way through the generic's indexing maps.
``cast``, ``clip``, ``bit_shift`` and ``where`` have lowerings of their own.
"""

import numpy as np

from ... import _mlir
from ..._mlir import arith, ir
from ...linalg_builders import element_of
from .builders import (
    add, cast, clamp, compare, constant, div, elementwise, is_float, map_values, maximum, minimum, mul, reinterpret, select,
    sub,
)
from .registry import lowers

# ======================================================================
# Unary ops, ``body(x, attrs)`` per element
# ======================================================================


def _expm1(x):
    return _mlir.math.expm1(x)


def _gelu(x, attrs):
    math, e = _mlir.math, x.type
    half, one = constant(e, 0.5), constant(e, 1.0)
    if attrs["approximate"] == "tanh":
        cube = mul(mul(x, x), x)
        inner = mul(constant(e, np.sqrt(2 / np.pi)), add(x, mul(constant(e, 0.044715), cube)))
        return mul(mul(half, x), add(one, math.tanh(inner)))
    return mul(mul(half, x), add(one, math.erf(div(x, constant(e, np.sqrt(2))))))


def _sign(x, attrs):
    e = x.type
    zero = constant(e, 0)
    negative = select(compare("lt", x, zero), constant(e, -1), zero if not is_float(e) else x)
    return select(compare("gt", x, zero), constant(e, 1), negative)


def _softplus(x, attrs):
    """log(1 + e**x) computed like numpy.logaddexp(0, x): max(x, 0) + log1p(e**-|x|)."""
    math, e = _mlir.math, x.type
    return add(maximum(x, constant(e, 0.0)), math.log1p(math.exp(arith.negf(math.absf(x)))))


def _like(x, value):
    """A constant of ``x``'s type."""
    return constant(x.type, value)


def _hard_swish(x, attrs):
    return mul(x, clamp(add(div(x, _like(x, 6.0)), _like(x, 0.5)), _like(x, 0.0), _like(x, 1.0)))


def _hard_sigmoid(x, attrs):
    return clamp(add(mul(_like(x, attrs["alpha"]), x), _like(x, attrs["beta"])), _like(x, 0.0), _like(x, 1.0))


def _elu(x, attrs):
    return select(compare("lt", x, _like(x, 0.0)), mul(_like(x, attrs["alpha"]), _expm1(x)), x)


def _selu(x, attrs):
    negative = mul(_like(x, attrs["alpha"]), _expm1(x))
    return mul(_like(x, attrs["gamma"]), select(compare("le", x, _like(x, 0.0)), negative, x))


def _sigmoid(x, attrs):
    return arith.divf(_like(x, 1.0), arith.addf(_like(x, 1.0), _mlir.math.exp(arith.negf(x))))


UNARY = {
    "abs": lambda x, a: _mlir.math.absf(x) if is_float(x.type) else _mlir.math.absi(x),
    "neg": lambda x, a: arith.negf(x) if is_float(x.type) else arith.subi(_like(x, 0), x),
    "exp": lambda x, a: _mlir.math.exp(x),
    "log": lambda x, a: _mlir.math.log(x),
    "sqrt": lambda x, a: _mlir.math.sqrt(x),
    "reciprocal": lambda x, a: arith.divf(_like(x, 1.0), x),
    "relu": lambda x, a: maximum(x, _like(x, 0)),
    "square": lambda x, a: mul(x, x),
    "sigmoid": _sigmoid,
    "tanh": lambda x, a: _mlir.math.tanh(x),
    "erf": lambda x, a: _mlir.math.erf(x),
    "floor": lambda x, a: _mlir.math.floor(x),
    "ceil": lambda x, a: _mlir.math.ceil(x),
    "round": lambda x, a: _mlir.math.roundeven(x),
    "sign": _sign,
    "sin": lambda x, a: _mlir.math.sin(x),
    "cos": lambda x, a: _mlir.math.cos(x),
    "softplus": _softplus,
    "softsign": lambda x, a: div(x, add(_like(x, 1.0), _mlir.math.absf(x))),
    "not": lambda x, a: arith.xori(x, _like(x, 1)),
    "hard_swish": _hard_swish,
    "hard_sigmoid": _hard_sigmoid,
    "leaky_relu": lambda x, a: select(compare("lt", x, _like(x, 0.0)), mul(_like(x, a["alpha"]), x), x),
    "elu": _elu,
    "selu": _selu,
    "gelu": _gelu,
}


@lowers(*UNARY)
def lower_unary(op, args):
    body = UNARY[op.mnemonic]
    attrs = op.attrs
    (result,) = op.operation.results
    return [map_values(args[0], ir.RankedTensorType(result.type).element_type, lambda x: body(x, attrs))]


@lowers("cast")
def lower_cast(op, args):
    to = ir.RankedTensorType(op.operation.results[0].type).element_type
    return [map_values(args[0], to, lambda x: cast(x, to))]


@lowers("clip")
def lower_clip(op, args):
    attrs = op.attrs
    return [map_values(args[0], element_of(args[0]), lambda x: minimum(
        maximum(x, constant(x.type, attrs["min"])), constant(x.type, attrs["max"])
    ))]


# ======================================================================
# Binary and ternary ops (numpy broadcasting)
# ======================================================================


def _pow(x, y, attrs):
    return _mlir.math.powf(x, y) if is_float(x.type) else _mlir.math.ipowi(x, y)


def _mod(x, y, attrs):
    """fmod=1: remainder with the sign of x; fmod=0: with the sign of y (floored)."""
    remainder = arith.remf(x, y) if is_float(x.type) else arith.remsi(x, y)
    if attrs["fmod"]:
        return remainder
    zero = constant(x.type, 0)
    differ = arith.xori(compare("lt", remainder, zero), compare("lt", y, zero))
    adjust = arith.andi(compare("ne", remainder, zero), differ)
    return select(adjust, add(remainder, y), remainder)


BINARY = {
    "add": lambda x, y, a: add(x, y),
    "sub": lambda x, y, a: sub(x, y),
    "mul": lambda x, y, a: mul(x, y),
    "div": lambda x, y, a: div(x, y),
    "pow": _pow,
    "max": lambda x, y, a: maximum(x, y),
    "min": lambda x, y, a: minimum(x, y),
    "mod": _mod,
    "prelu": lambda x, y, a: select(compare("lt", x, constant(x.type, 0)), mul(y, x), x),
    "equal": lambda x, y, a: compare("eq", x, y),
    "less": lambda x, y, a: compare("lt", x, y),
    "less_or_equal": lambda x, y, a: compare("le", x, y),
    "greater": lambda x, y, a: compare("gt", x, y),
    "greater_or_equal": lambda x, y, a: compare("ge", x, y),
    "and": lambda x, y, a: arith.andi(x, y),
    "or": lambda x, y, a: arith.ori(x, y),
    "xor": lambda x, y, a: arith.xori(x, y),
}


@lowers(*BINARY)
def lower_binary(op, args):
    body = BINARY[op.mnemonic]
    attrs = op.attrs
    (spec,) = op.result_specs
    element = ir.RankedTensorType(op.operation.results[0].type).element_type
    return [elementwise(args, spec.shape, element, lambda x, y: body(x, y, attrs))]


@lowers("bit_shift")
def lower_bit_shift(op, args):
    """Unsigned elements are shifted as signless ones (unrealized casts, which vanish
    in the LLVM lowering). Amounts out of [0, width) are poison in LLVM: a select gives
    numpy's 0 instead, and a signed right shift clamps the amount (as unsigned) to
    width - 1, which leaves the sign fill."""
    (spec,) = op.result_specs
    direction, signed, width = op.attrs["direction"], spec.dtype.kind == "i", spec.dtype.itemsize * 8
    element, signless = element_of(args[0]), ir.IntegerType.get_signless(width)

    def body(x, y):
        x, y = reinterpret(x, signless), reinterpret(y, signless)
        if direction == "RIGHT" and signed:
            return arith.shrsi(x, arith.minui(y, constant(signless, width - 1)))
        shifted = arith.shli(x, y) if direction == "LEFT" else arith.shrui(x, y)
        in_range = arith.cmpi(arith.CmpIPredicate.ult, y, constant(signless, width))
        return reinterpret(select(in_range, shifted, constant(signless, 0)), element)

    return [elementwise(args, spec.shape, element, body)]


@lowers("where")
def lower_where(op, args):
    (spec,) = op.result_specs
    return [elementwise(args, spec.shape, element_of(args[1]), select)]
