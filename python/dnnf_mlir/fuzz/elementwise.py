"""Element-wise op families: unary and binary chains with broadcasting, variadic ops,
and the discontinuous ops (rounding, comparisons, selection, arg-max).

Ops defined on part of the line read a guarded operand (|x| + 1/2 for Log, Sqrt,
Reciprocal, a divisor, a power's base), and Exp an operand of magnitude at most 1,
so no reference is infinite or meaningless. Discontinuous ops read graph inputs
only: an input is the same bits everywhere, while a computed value differs in its
last bits between implementations, which would flip a Floor or a comparison.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .draws import axis, broadcast, broadcasts, constant, partner, pick
from .graph import FLOAT, GraphBuilder, Value

BOOL, INT64 = np.dtype(np.bool_), np.dtype(np.int64)

# op type -> (output scale from the input's, attributes strategy)
UNARY = {
    "Relu": (lambda s: s, st.just({})),
    "Tanh": (lambda s: min(s, 1.0), st.just({})),
    "Sigmoid": (lambda s: 0.5, st.just({})),
    "Neg": (lambda s: s, st.just({})),
    "Abs": (lambda s: s, st.just({})),
    "Identity": (lambda s: s, st.just({})),
    "Softsign": (lambda s: min(s, 1.0), st.just({})),
    "Erf": (lambda s: min(s, 1.0), st.just({})),
    "Sin": (lambda s: min(s, 1.0), st.just({})),
    "Cos": (lambda s: 1.0, st.just({})),
    "Softplus": (lambda s: s, st.just({})),
    "HardSwish": (lambda s: s, st.just({})),
    "LeakyRelu": (lambda s: s, st.fixed_dictionaries({"alpha": st.sampled_from((0.01, 0.1, 0.5))})),
    "Elu": (lambda s: s, st.fixed_dictionaries({"alpha": st.sampled_from((1.0, 0.5))})),
    "Selu": (lambda s: 1.05 * s, st.just({})),
    "HardSigmoid": (lambda s: 0.5, st.fixed_dictionaries({"alpha": st.sampled_from((0.2, 0.5)), "beta": st.just(0.5)})),
    "Gelu": (lambda s: s, st.fixed_dictionaries({"approximate": st.sampled_from(("none", "tanh"))})),
    "Atan": (lambda s: min(s, math.pi / 2), st.just({})),
    "Asinh": (lambda s: s, st.just({})),
    "Mish": (lambda s: s, st.just({})),
}
GUARDED_UNARY = {"Log": lambda s: 1.0, "Sqrt": lambda s: math.sqrt(s + 0.5), "Reciprocal": lambda s: 1.0}
BINARY = {
    "Add": lambda a, b: math.hypot(a, b), "Sub": lambda a, b: math.hypot(a, b), "Mul": lambda a, b: a * b,
    "Max": lambda a, b: math.hypot(a, b), "Min": lambda a, b: math.hypot(a, b), "Div": lambda a, b: 2 * a,
}
ROUNDING = ("Floor", "Ceil", "Round", "Sign")
COMPARISONS = ("Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal")


def positive(g: GraphBuilder, value: Value) -> Value:
    """|value| + 1/2: an operand bounded away from zero."""
    half = g.constant(np.array(0.5, FLOAT))
    magnitude = g.one("Abs", [value], value.shape, scale=value.scale)
    return g.one("Add", [magnitude, half], value.shape, scale=value.scale + 0.5)


def unary(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    op_type = draw(st.sampled_from(sorted(UNARY) + sorted(GUARDED_UNARY) + ["Exp", "Clip"]))
    if op_type in GUARDED_UNARY:
        g.one(op_type, [positive(g, x)], x.shape, scale=GUARDED_UNARY[op_type](x.scale))
    elif op_type == "Exp":
        if x.scale > 1:
            x = g.one("Mul", [x, g.constant(np.array(1 / x.scale, FLOAT))], x.shape)
        g.one("Exp", [x], x.shape, scale=math.e ** (x.scale**2))
    elif op_type == "Clip":
        low = draw(st.sampled_from((-0.5, -1.0, 0.0)))
        bounds = [g.constant(np.array(low, FLOAT)), g.constant(np.array(low + draw(st.sampled_from((0.5, 1.0, 6.0))), FLOAT))]
        g.one("Clip", [x, *bounds[: draw(st.integers(1, 2))]], x.shape, scale=min(x.scale, 6.0))
    else:
        scale, attrs = UNARY[op_type]
        g.one(op_type, [x], x.shape, scale=scale(x.scale), **draw(attrs))


def binary(draw, g: GraphBuilder) -> None:
    a = pick(draw, g)
    b = partner(draw, g, a.shape)
    op_type = draw(st.sampled_from(sorted(BINARY) + ["Pow", "PRelu"]))
    shape = broadcast(a.shape, b.shape)
    if draw(st.booleans()) and op_type not in ("Div", "Pow", "PRelu"):
        a, b = b, a
    if op_type == "Div":
        g.one("Div", [a, positive(g, b)], shape, scale=BINARY["Div"](a.scale, b.scale))
    elif op_type == "Pow":
        exponent = draw(st.sampled_from((2.0, 0.5, 3.0, -1.0)))
        base = positive(g, a)
        g.one("Pow", [base, g.constant(np.array(exponent, FLOAT))], a.shape, scale=base.scale ** abs(exponent) + 1)
    elif op_type == "PRelu":
        # The slope broadcasts to the input (unidirectionally): b's shape within a's.
        slope = b if broadcast(a.shape, b.shape) == a.shape else g.constant(np.full((), 0.25, FLOAT))
        g.one("PRelu", [a, slope], a.shape, scale=a.scale)
    else:
        g.one(op_type, [a, b], shape, scale=BINARY[op_type](a.scale, b.scale))


def variadic(draw, g: GraphBuilder) -> None:
    """Sum, Mean, Max or Min of two or three broadcasting operands."""
    operands = [pick(draw, g)]
    shape = operands[0].shape
    for _ in range(draw(st.integers(1, 2))):
        operands.append(partner(draw, g, shape))
        shape = broadcast(shape, operands[-1].shape)
    scale = math.sqrt(sum(v.scale**2 for v in operands))
    g.one(draw(st.sampled_from(("Sum", "Mean", "Max", "Min"))), operands, shape, scale=scale)


def exact(v: Value) -> bool:
    return v.exact and v.is_float


def discontinuous(draw, g: GraphBuilder) -> None:
    """Rounding, comparisons (then Where, and logic), arg-max, casts through integers: of inputs only."""
    x = pick(draw, g, exact)
    kind = draw(st.sampled_from(("rounding", "where", "argmax", "cast")))
    if kind == "rounding":
        g.one(draw(st.sampled_from(ROUNDING)), [x], x.shape, scale=x.scale)
    elif kind == "argmax":
        keepdims = draw(st.integers(0, 1))
        a = axis(draw, x.rank)
        shape = tuple(1 if i == a % x.rank else d for i, d in enumerate(x.shape) if keepdims or i != a % x.rank)
        g.one(draw(st.sampled_from(("ArgMax", "ArgMin"))), [x], shape, INT64, axis=a, keepdims=keepdims,
              select_last_index=draw(st.integers(0, 1)))
    elif kind == "cast":
        integer = g.one("Cast", [x], x.shape, np.int32, to=6)  # INT32: truncation towards zero
        g.one("Cast", [integer], x.shape, FLOAT, scale=x.scale, to=1)
    else:
        y = pick(draw, g, lambda v: exact(v) and broadcasts(v.shape, x.shape) and broadcast(v.shape, x.shape) == x.shape,
                 make=lambda draw, g: x)
        condition = g.one(draw(st.sampled_from(COMPARISONS)), [x, y], x.shape, BOOL)
        if draw(st.booleans()):
            other = g.one("Greater", [x, g.constant(np.array(0.0, FLOAT))], x.shape, BOOL)
            logic = draw(st.sampled_from(("And", "Or", "Xor", "Not")))
            condition = g.one(logic, [condition] if logic == "Not" else [condition, other], x.shape, BOOL)
        a = pick(draw, g, lambda v: broadcasts(v.shape, x.shape), make=lambda draw, g: constant(draw, g, x.shape))
        b = partner(draw, g, broadcast(x.shape, a.shape))
        g.one("Where", [condition, a, b], broadcast(x.shape, a.shape, b.shape), scale=math.hypot(a.scale, b.scale))


FAMILIES = {"unary": unary, "binary": binary, "variadic": variadic, "discontinuous": discontinuous}

__all__ = ["BINARY", "FAMILIES", "GUARDED_UNARY", "UNARY", "positive"]
