"""The rule catalogue as a table: one row per rule, with its effect on its example.

Each row has the rule's family, name, before and after forms (as the paper's tables
write them), its note, and the ops and FLOPs of the rule's example instance
(``examples.instantiate``) before and after ``driver.apply_once``. ``dnnf-opt
--list-rewrite-rules`` prints the rows, ``dialect_docs.rules_markdown`` makes
``dialect/RewriteRules.md`` of them. Nothing is cached on disk: the whole catalogue takes
a few seconds.
"""

from dataclasses import dataclass

import numpy as np

from ..context import make_context
from ..statistics import function_statistics
from .catalogue import catalogue
from .driver import apply_once
from .examples import instantiate
from .rules import FAMILIES
from .terms import N

# Every rule's instance is built from its own generator with this seed, so that a
# row does not depend on which other rules were listed.
SEED = 0


@dataclass(frozen=True)
class RuleRow:
    family: str
    name: str
    before: str
    after: str
    note: str
    ops_before: int | None = None
    ops_after: int | None = None
    flops_before: int | None = None
    flops_after: int | None = None
    # Why the counts are missing: the instance could not be built, or the rule did not match it.
    error: str = ""

    @property
    def flops_change(self) -> str:
        """'before -> after' FLOPs on the example, or '?' (with the reason) when unknown."""
        if self.flops_before is None or self.flops_after is None:
            return f"? ({self.error})" if self.error else "?"
        return f"{self.flops_before} -> {self.flops_after}"

    @property
    def ops_change(self) -> str:
        if self.ops_before is None or self.ops_after is None:
            return "?"
        return f"{self.ops_before} -> {self.ops_after}"


def rule_row(rule, context=None) -> RuleRow:
    """The row of one rule; ``context`` (an MLIR context with the ECG dialect) is
    created when not given."""
    row = dict(family=rule.family, name=rule.name, before=str(rule.lhs), after=str(rule.rhs), note=rule.note)
    context = context or make_context()
    try:
        instance = instantiate(rule, context, np.random.default_rng(SEED))
    except Exception as error:  # noqa: BLE001 - a rule without a buildable example still gets listed
        return RuleRow(**row, error=f"no example: {type(error).__name__}")
    function = instance.function.operation
    with context:
        before = function_statistics(function)
        if not apply_once(function.regions[0].blocks[0], rule):
            return RuleRow(**row, ops_before=before.ops, flops_before=before.flops, error="does not match its example")
        after = function_statistics(function)
    return RuleRow(**row, ops_before=before.ops, ops_after=after.ops, flops_before=before.flops, flops_after=after.flops)


def rule_rows(families=None) -> list:
    """Rows of the catalogue's rules (of ``families`` when given), in catalogue order."""
    context = make_context()
    return [rule_row(rule, context) for rule in catalogue() if families is None or rule.family in families]


def family_counts() -> dict:
    """family -> number of rules, in ``FAMILIES`` order, plus "total"."""
    counts = catalogue().counts()
    return {**{family: counts[family] for family in FAMILIES}, "total": sum(counts.values())}



# ----- which ops the rules involve (for the op reference) -----


def _ops_in(term) -> set:
    if isinstance(term, N):
        return {term.op}.union(*(_ops_in(o) for o in term.operands))
    return set()


def rules_by_op() -> dict:
    """mnemonic -> number of rules whose before or after form contains the op."""
    counts: dict = {}
    for rule in catalogue():
        for mnemonic in _ops_in(rule.lhs) | _ops_in(rule.rhs):
            counts[mnemonic] = counts.get(mnemonic, 0) + 1
    return counts


__all__ = ["RuleRow", "rule_row", "rule_rows", "family_counts", "rules_by_op", "FAMILIES", "SEED"]
