"""Associative rules: regroup chains so that fewer or cheaper ops remain.

Generated from the declarations: every associative and commutative op gets its
constant-regrouping rules, every (op, inverse) pair (add/sub, mul/div) moves
constants across the inverse, and every unary op with a morphism f(a ∘ b) ==
f(a) • f(b) into an arithmetic op gets Exp(A) ⊙ Exp(B) -> Exp(A + B) and its
three-operand chain form. The paper's own examples follow by hand.
"""

from ..terms import A, B, C, K1, K2, N
from .ops import associative_ops, inverse_ops, morphisms

_ARITHMETIC = ("add", "sub", "mul", "div")
# Reductions whose combining op is this binary op: R(A) ∘ R(B) == R(A ∘ B) for equal shapes.
_COMBINED_REDUCTIONS = {"reduce_prod": "mul", "reduce_max": "max", "reduce_min": "min"}


def _float(*names):
    """Condition: the named values are floating point (integer division does not regroup)."""
    return lambda m: all(m.spec(n).is_float for n in names)


def same_reduction(m) -> bool:
    """Both reductions see equally shaped operands and reduce them alike."""
    return m.spec("A") == m.spec("B") and m.attrs("r1") == m.attrs("r2")


def add_rules(catalogue):
    for op in associative_ops():
        catalogue.add(f"{op}-constants", "associative", N(op, N(op, A, K1), K2), N(op, A, N(op, K1, K2)),
                      note="the constants fold into one")
        catalogue.add(f"{op}-constant-pairs", "associative", N(op, N(op, A, K1), N(op, B, K2)),
                      N(op, N(op, A, B), N(op, K1, K2)))
        catalogue.add(f"{op}-constant-outward", "associative", N(op, N(op, A, K1), B), N(op, N(op, A, B), K1),
                      note="no gain of its own: moves a constant toward others it can fold with")
    for inverse, base in inverse_ops():
        _add_inverse_rules(catalogue, inverse, base)
    for f, inner, outer in morphisms():
        if outer not in _ARITHMETIC:
            continue
        catalogue.add(f"{f}-{outer}-{f}", "associative", N(outer, N(f, A), N(f, B)), N(f, N(inner, A, B)))
        if outer in associative_ops():
            catalogue.add(f"{f}-{outer}-{f}-chain", "associative", N(outer, N(outer, N(f, A), B), N(f, C)),
                          N(outer, N(f, N(inner, A, C)), B), note="the paper's Abs(A) ⊙ B ⊙ Abs(C) form")
    for reduction, op in _COMBINED_REDUCTIONS.items():
        catalogue.add(f"{reduction}-{op}-{reduction}", "associative",
                      N(op, N(reduction, A, name="r1"), N(reduction, B, name="r2")),
                      N(reduction, N(op, A, B), like="r1"), same_reduction)
    _add_paper_rules(catalogue)


def _add_inverse_rules(catalogue, inv, base):
    """Constants regroup across an inverse: (A - K1) - K2 -> A - (K1 + K2) and the like."""
    exact = None if base == "add" else _float("A")
    forms = {
        "constants": (N(inv, N(inv, A, K1), K2), N(inv, A, N(base, K1, K2))),
        "then-base": (N(base, N(inv, A, K1), K2), N(base, A, N(inv, K2, K1))),
        "of-base": (N(inv, N(base, A, K1), K2), N(base, A, N(inv, K1, K2))),
        "from-constant-then-base": (N(base, N(inv, K1, A), K2), N(inv, N(base, K1, K2), A)),
        "from-constant-twice": (N(inv, N(inv, K1, A), K2), N(inv, N(inv, K1, K2), A)),
        "constant-minus-base": (N(inv, K2, N(base, A, K1)), N(inv, N(inv, K2, K1), A)),
        "constant-minus-inverse": (N(inv, K2, N(inv, A, K1)), N(inv, N(base, K2, K1), A)),
        "constant-minus-from-constant": (N(inv, K2, N(inv, K1, A)), N(base, A, N(inv, K2, K1))),
        "cancel": (N(base, N(inv, A, B), B), A),
        "cancel-base": (N(inv, N(base, A, B), B), A),
        "cancel-twice": (N(inv, A, N(inv, A, B)), B),
    }
    for form, (lhs, rhs) in forms.items():
        catalogue.add(f"{inv}-{form}", "associative", lhs, rhs, exact)


def _add_paper_rules(catalogue):
    """DNNFusion's Table 4 examples that are not instances of the generated families."""
    catalogue.add(
        "reciprocal-mul-reciprocal-of-mul", "associative",
        N("mul", N("reciprocal", A), N("reciprocal", N("mul", A, B))),
        N("reciprocal", N("mul", N("square", A), B)),
        note="paper: two Recip and two Mul become one Recip, one Square and one Mul",
    )
    catalogue.add(
        "mul-sqrt-pairs", "associative",
        N("mul", N("mul", A, N("sqrt", B)), N("mul", N("sqrt", B), C)),
        N("mul", N("mul", A, B), C),
        note="paper: (A ⊙ √B) ⊙ (√B ⊙ C) -> A ⊙ B ⊙ C",
    )
    catalogue.add(
        "mul-shared-factor-pairs", "associative",
        N("mul", N("mul", A, B), N("mul", B, C)),
        N("mul", N("mul", A, C), N("square", B)),
        note="paper: (A ⊙ ReduceSum(B)) ⊙ (ReduceSum(B) ⊙ C) -> A ⊙ Square(ReduceSum(B)) ⊙ C, for any shared B",
    )

