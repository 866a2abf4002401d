"""The static properties every ECG op declares: mapping type and algebra.

The mapping type (DNNFusion, PLDI 2021, section 3) says how input elements map to
output elements; the fusion planner combines the types of producer and consumer.
The algebraic properties are what the math-property graph rewriting derives its
rules from.
"""

import enum
from dataclasses import dataclass


class MappingType(enum.Enum):
    """How the elements of an op's inputs map to the elements of its output."""

    ONE_TO_ONE = "One-to-One"
    ONE_TO_MANY = "One-to-Many"
    MANY_TO_MANY = "Many-to-Many"
    REORGANIZE = "Reorganize"
    SHUFFLE = "Shuffle"

    @property
    def complexity(self) -> int:
        """Rank in the paper's order: One-to-One < Reorganize, Shuffle < One-to-Many, Many-to-Many."""
        return _COMPLEXITY[self]

    @staticmethod
    def most_complex(*types: "MappingType") -> "MappingType":
        return max(types, key=lambda t: t.complexity)

    def __str__(self) -> str:
        return self.value


_COMPLEXITY = {
    MappingType.ONE_TO_ONE: 0,
    MappingType.REORGANIZE: 1,
    MappingType.SHUFFLE: 1,
    MappingType.ONE_TO_MANY: 2,
    MappingType.MANY_TO_MANY: 2,
}


# Stands for every unary elementwise op in ``Algebra.commutes_with`` (data-movement ops declare it;
# the rewriting's commutative rules read it).
UNARY_ELEMENTWISE = "unary elementwise"


@dataclass(frozen=True)
class Algebra:
    """Algebraic properties of an op, by op mnemonic where another op is named.

    ``identity``/``absorbing`` are the elements e with op(x, e) == x and
    op(x, e) == e; ``distributes_over`` lists ops f with op(a, f(b, c)) ==
    f(op(a, b), op(a, c)); ``commutes_with`` lists ops g with op(g(x)) == g(op(x))
    (the mapping-type names "Reorganize"/"Shuffle" stand for every such op, and
    ``UNARY_ELEMENTWISE`` for every unary elementwise op).
    ``morphisms`` lists pairs (f, g) of binary ops with op(f(a, b)) == g(op(a), op(b))
    for a unary op (exp: (add, mul)); ``inverse_of`` names the op this one undoes
    (sub: add), which lets constants move across it.
    """

    commutative: bool = False
    associative: bool = False
    distributes_over: tuple = ()
    identity: float | None = None
    absorbing: float | None = None
    commutes_with: tuple = ()
    morphisms: tuple = ()
    inverse_of: str | None = None

    @property
    def has_rewrite_properties(self) -> bool:
        """True when the rewriting stage may move or combine this op."""
        return (
            self.commutative or self.associative or bool(self.distributes_over) or bool(self.commutes_with)
            or bool(self.morphisms) or self.inverse_of is not None
        )

    def describe(self) -> str:
        parts = [name for name in ("commutative", "associative") if getattr(self, name)]
        if self.distributes_over:
            parts.append("distributes over " + ", ".join(self.distributes_over))
        if self.identity is not None:
            parts.append(f"identity {self.identity:g}")
        if self.absorbing is not None:
            parts.append(f"absorbing {self.absorbing:g}")
        if self.commutes_with:
            parts.append("commutes with " + ", ".join(self.commutes_with))
        for inner, outer in self.morphisms:
            parts.append(f"f({inner}(a, b)) = {outer}(f(a), f(b))")
        if self.inverse_of:
            parts.append(f"inverse of {self.inverse_of}")
        return "; ".join(parts) or "none"


NO_ALGEBRA = Algebra()
