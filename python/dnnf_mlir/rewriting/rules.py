"""Rewrite rules and the catalogue they are collected in.

A rule is a before/after pair in the term language (``terms``), a family and an
optional condition on the match. The paper's three families are "associative",
"distributive" and "commutative"; "strength" holds the classic simplifications a
complete system needs alongside (identities, no-op data movement, weight folding).
"""

from dataclasses import dataclass
from typing import Callable

from ..ecg import from_mlir
from .matching import match_pattern
from .terms import N, mnemonics

FAMILIES = ("associative", "distributive", "commutative", "strength")
# Order and arithmetic: integer arithmetic wraps around, so max(a + b, a + c) and
# a + max(b, c) differ once a sum overflows.
_ORDER = {"max", "min", "reduce_max", "reduce_min", "max_pool", "global_max_pool"}
_ARITHMETIC = {"add", "sub", "neg", "mul", "div"}


@dataclass(frozen=True)
class Rule:
    name: str
    family: str
    lhs: N
    rhs: object
    condition: Callable | None = None
    note: str = ""
    # Shapes for the variables of the rule's example instance (``examples``), where
    # the ones derived from the pattern would not match (a per-channel constant).
    example: dict | None = None

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"rule {self.name}: unknown family '{self.family}'")
        # The property rules that move a Div, or arithmetic across an order op, are
        # stated for floating point only: integer division truncates ((7 + 7) / 2 is
        # 7, 7/2 + 7/2 is 6) and integer arithmetic wraps.
        ops = mnemonics(self.lhs) | mnemonics(self.rhs)
        inexact = "div" in ops or (ops & _ORDER and ops & _ARITHMETIC)
        object.__setattr__(self, "float_only", self.family != "strength" and bool(inexact))

    @property
    def root(self) -> str:
        """The mnemonic of the op the pattern is rooted at."""
        return self.lhs.op

    def matches(self, op):
        """The matches of this rule rooted at ``op`` that satisfy its condition."""
        if self.float_only and not from_mlir(op.results[0].type).is_float:
            return
        for match in match_pattern(self.lhs, op, self):
            if self.condition is None or self.condition(match):
                yield match

    def __str__(self):
        return f"{self.lhs} -> {self.rhs}"


class Catalogue:
    """The rules by name, in definition order; a name may be defined once."""

    def __init__(self):
        self.rules: dict[str, Rule] = {}

    def add(self, name, family, lhs, rhs, condition=None, note="", example=None):
        if name in self.rules:
            raise ValueError(f"rewrite rule '{name}' is defined twice")
        self.rules[name] = Rule(name, family, lhs, rhs, condition, note, example)

    def __iter__(self):
        return iter(self.rules.values())

    def __len__(self):
        return len(self.rules)

    def by_root(self, names=None) -> dict:
        """Rules grouped by root mnemonic (restricted to ``names`` when given)."""
        groups: dict[str, list] = {}
        for rule in self.rules.values():
            if names is None or rule.name in names:
                groups.setdefault(rule.root, []).append(rule)
        return groups

    def counts(self) -> dict:
        counts = {family: 0 for family in FAMILIES}
        for rule in self.rules.values():
            counts[rule.family] += 1
        return counts
