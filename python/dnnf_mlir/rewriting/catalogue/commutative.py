"""Commutative rules: swap two ops so that the elementwise work happens on fewer elements.

Generated from ``commutes_with`` and the morphisms: every unary elementwise op
moves across every data-movement op toward the smaller tensor (above a Slice or
Gather, below an Expand or Tile; across same-size moves toward the producers,
where it meets what it may combine with); scalar arithmetic does the same; a
reduction swaps with a unary op that maps its combining op (ReduceProd(Exp(A)) ->
Exp(ReduceSum(A)), ReduceMax(Relu(A)) -> Relu(ReduceMax(A))); scalar factors move
out of reductions and linear ops.
"""

from ..terms import A, B, S1, N
from .ops import morphisms, movement_ops, shrinks, unary_ops

# Reductions and what combines their elements (the mean and average pools are linear).
_COMBINING = {
    "reduce_sum": "add", "reduce_mean": "add", "reduce_prod": "mul", "reduce_max": "max", "reduce_min": "min",
    "max_pool": "max", "global_max_pool": "max", "average_pool": "add", "global_average_pool": "add",
}
_REDUCTION_OF = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max", "min": "reduce_min"}
# Scalar arithmetic that moves like a unary op; sub and div also with the scalar first.
_SCALAR_OPS = ("add", "sub", "mul", "div")
# R(A ∘ s) == R(A) ∘ s: scaling commutes with the linear reductions, shifting with the
# mean and the order statistics, positive scaling with the order statistics.
_SCALAR_REDUCTIONS = {
    "reduce_sum": ("mul", "div"), "reduce_mean": ("add", "sub", "mul", "div"),
    "average_pool": ("mul", "div"), "global_average_pool": ("mul", "div"),
    "reduce_max": ("add", "sub", "mul", "div"), "reduce_min": ("add", "sub", "mul", "div"),
    "max_pool": ("add", "sub", "mul", "div"), "global_max_pool": ("add", "sub", "mul", "div"),
}
_ORDER_STATISTICS = ("reduce_max", "reduce_min", "max_pool", "global_max_pool")


def _positive_scalar(m) -> bool:
    return bool((m.array("S1") > 0).all())


def add_rules(catalogue):
    for move in movement_ops():
        indexed = move in ("gather", "gather_elements")

        def moved(value, name=None):
            operands = (value, B) if indexed else (value,)
            return N(move, *operands, name=name, like=None if name else "m")

        for f in unary_ops():
            if shrinks(move):
                lhs, rhs = moved(N(f, A, name="f"), "m"), N(f, moved(A), like="f")
            else:
                lhs, rhs = N(f, moved(A, "m"), name="f"), moved(N(f, A, like="f"))
            catalogue.add(f"{f}-{move}", "commutative", lhs, rhs)
        for op in _SCALAR_OPS:
            for scalar_first in (False, True) if op in ("sub", "div") else (False,):
                def apply(value):
                    return N(op, S1, value) if scalar_first else N(op, value, S1)

                if shrinks(move):
                    lhs, rhs = moved(apply(A), "m"), apply(moved(A))
                else:
                    lhs, rhs = apply(moved(A, "m")), moved(apply(A))
                side = "scalar-" + ("first" if scalar_first else "last")
                catalogue.add(f"{op}-{side}-{move}", "commutative", lhs, rhs)
    _add_reduction_rules(catalogue)
    catalogue.add("reduce_sum-bit_shift-left", "commutative",
                  N("reduce_sum", N("bit_shift", A, S1, direction="LEFT"), name="r"),
                  N("bit_shift", N("reduce_sum", A, like="r"), S1, direction="LEFT"),
                  note="paper: ReduceSum(BitShift(A)) -> BitShift(ReduceSum(A)); exact in wrapping integer arithmetic")
    for op in ("mul", "div"):
        catalogue.add(f"mat_mul-{op}-scalar-lhs", "commutative", N(op, N("mat_mul", A, B), S1),
                      N("mat_mul", N(op, A, S1), B), note="scale the smaller operand instead of the product")
        catalogue.add(f"mat_mul-{op}-scalar-rhs", "commutative", N(op, N("mat_mul", A, B), S1),
                      N("mat_mul", A, N(op, B, S1)))


def _add_reduction_rules(catalogue):
    for reduction, combining in _COMBINING.items():
        for f, inner, outer in morphisms():
            if outer != combining or (inner != outer and (inner == "mul" or not reduction.startswith("reduce_"))):
                continue
            inner_reduction = reduction if inner == outer else _REDUCTION_OF[inner]
            catalogue.add(f"{reduction}-{f}", "commutative", N(reduction, N(f, A), name="r"),
                          N(f, N(inner_reduction, A, like="r")),
                          note="paper: ReduceProd(Exp(A)) -> Exp(ReduceSum(A))" if f == "exp" and inner == "add" else "")
        for op in _SCALAR_REDUCTIONS.get(reduction, ()):
            condition = _positive_scalar if reduction in _ORDER_STATISTICS and op in ("mul", "div") else None
            catalogue.add(f"{reduction}-{op}-scalar", "commutative", N(reduction, N(op, A, S1), name="r"),
                          N(op, N(reduction, A, like="r"), S1), condition)
