"""Distributive rules: factor a shared operand out so that one op does the work of two.

Generated from ``distributes_over``: A ⊙ B + A ⊙ C -> A ⊙ (B + C) for every
declared pair (right-factoring for div and sub, whose distributivity is on the
right), the identity forms A + A ⊙ B -> A ⊙ (B + 1), linear ops (MatMul, Gemm,
Conv) sharing an operand, unary ops with a lattice morphism (max/min/and/or:
monotone functions and De Morgan), and every elementwise op over a Where.
"""

from ...ecg import OPS
from ..terms import A, B, C, K1, K2, Lit, N, Var
from .ops import distributions, is_commutative, morphisms, unary_ops

_LATTICE = ("max", "min", "and", "or")
_LINEAR = ("mat_mul", "gemm", "conv", "conv_transpose")
# Elementwise binary ops a Where can be hoisted out of.
_SELECT_HOISTED = ("add", "sub", "mul", "div", "max", "min")
X, COND = Var("X"), Var("COND")


def same_attrs(*names):
    return lambda m: all(m.attrs(n) == m.attrs(names[0]) for n in names[1:])


def _and(*conditions):
    return lambda m: all(c(m) for c in conditions)


def add_rules(catalogue):
    for op, over in distributions():
        if op in _LINEAR:
            _add_linear_rules(catalogue, op, over)
        elif is_commutative(op):
            _add_left_rules(catalogue, op, over)
        else:
            _add_right_rules(catalogue, op, over)
    for f, inner, outer in morphisms():
        if outer in _LATTICE:
            catalogue.add(f"{f}-{outer}-{f}", "distributive", N(outer, N(f, A), N(f, B)), N(f, N(inner, A, B)),
                          note="f distributes over the lattice op (monotone f; De Morgan for not)")
    for f in unary_ops():
        catalogue.add(f"where-{f}", "distributive",
                      N("where", COND, N(f, A, name="f1"), N(f, B, name="f2")),
                      N(f, N("where", COND, A, B), like="f1"), same_attrs("f1", "f2"))
    for op in _SELECT_HOISTED:
        catalogue.add(f"where-{op}-left", "distributive",
                      N("where", COND, N(op, A, B), N(op, A, C)), N(op, A, N("where", COND, B, C)))
        if not is_commutative(op):
            catalogue.add(f"where-{op}-right", "distributive",
                          N("where", COND, N(op, B, A), N(op, C, A)), N(op, N("where", COND, B, C), A))
    for reduction in ("reduce_sum", "reduce_mean"):
        for op in ("add", "sub"):
            catalogue.add(f"{reduction}-{op}-{reduction}", "distributive",
                          N(op, N(reduction, A, name="r1"), N(reduction, B, name="r2")),
                          N(reduction, N(op, A, B), like="r1"),
                          _and(lambda m: m.spec("A") == m.spec("B"), same_attrs("r1", "r2")),
                          note="paper: ReduceSum(A) + ReduceSum(B) -> ReduceSum(A + B)")
    _add_paper_rules(catalogue)


def _add_left_rules(catalogue, op, over):
    """op distributes over ``over`` from the left: A ⊙ (B ⊕ C) == A ⊙ B ⊕ A ⊙ C."""
    catalogue.add(f"{op}-{over}-factor", "distributive", N(over, N(op, A, B), N(op, A, C)), N(op, A, N(over, B, C)))
    catalogue.add(f"{op}-{over}-expand-constants", "distributive", N(op, N(over, A, K1), K2),
                  N(over, N(op, A, K2), N(op, K1, K2)),
                  note="no gain of its own: lets the constants fold with neighbours (and into weights)")
    identity = OPS[op].ALGEBRA.identity
    if identity is None:
        return
    catalogue.add(f"{op}-{over}-identity", "distributive", N(over, A, N(op, A, B)), N(op, A, N(over, Lit(identity), B)),
                  note="paper: A + A ⊙ B -> A ⊙ (B + 1)")
    if not is_commutative(over):
        catalogue.add(f"{op}-{over}-identity-right", "distributive", N(over, N(op, A, B), A),
                      N(op, A, N(over, B, Lit(identity))))


def _add_right_rules(catalogue, op, over):
    """op distributes over ``over`` from the right: (B ⊕ C) ⊘ A == B ⊘ A ⊕ C ⊘ A."""
    catalogue.add(f"{op}-{over}-factor", "distributive", N(over, N(op, B, A), N(op, C, A)), N(op, N(over, B, C), A))
    if over in ("add", "sub"):
        catalogue.add(f"{op}-{over}-expand-constants", "distributive", N(op, N(over, A, K1), K2),
                      N(over, N(op, A, K2), N(op, K1, K2)), note="no gain of its own: lets the constants fold")


def _add_linear_rules(catalogue, op, over):
    """A linear op sharing one operand: L(A, B) ⊕ L(A, C) -> L(A, B ⊕ C), and on the other side."""
    same_b = _and(lambda m: m.spec("B") == m.spec("C"), same_attrs("l1", "l2"))
    same_a = _and(lambda m: m.spec("A") == m.spec("B"), same_attrs("l1", "l2"))
    catalogue.add(f"{op}-{over}-shared-lhs", "distributive",
                  N(over, N(op, A, B, name="l1"), N(op, A, C, name="l2")), N(op, A, N(over, B, C), like="l1"), same_b)
    catalogue.add(f"{op}-{over}-shared-rhs", "distributive",
                  N(over, N(op, A, C, name="l1"), N(op, B, C, name="l2")), N(op, N(over, A, B), C, like="l1"), same_a)


def _add_paper_rules(catalogue):
    catalogue.add("square-sub-mul", "distributive", N("sub", N("square", X), N("mul", X, C)),
                  N("mul", X, N("sub", X, C)), note="paper: Square(A + B) - (A + B) ⊙ C -> (A + B) ⊙ (A + B - C)")
    catalogue.add("square-add-mul", "distributive", N("add", N("square", X), N("mul", X, C)),
                  N("mul", X, N("add", X, C)))
    catalogue.add("mul-sub-square", "distributive", N("sub", N("mul", X, C), N("square", X)),
                  N("mul", X, N("sub", C, X)))
    for outer, inner in (("max", "min"), ("min", "max")):
        catalogue.add(f"sub-{outer}-shared-minuend", "distributive", N(outer, N("sub", A, B), N("sub", A, C)),
                      N("sub", A, N(inner, B, C)), note="subtraction is antitone in its second operand")

