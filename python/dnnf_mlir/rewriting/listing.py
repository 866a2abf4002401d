"""The rule catalogue as a table: one row per rule, with its effect on its example.

Each row has the rule's family, name, before and after forms (as the paper's tables
write them), its note, and the ops and FLOPs of the rule's example instance
(``examples.instantiate``) before and after ``driver.apply_once``. ``dnnf-opt
--list-rewrite-rules`` prints the rows, ``tools/gen_dialect_docs.py`` writes them to
``dialect/RewriteRules.md``. Nothing is cached on disk: the whole catalogue takes
a few seconds.
"""

from dataclasses import dataclass

import numpy as np

from .. import make_context
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


# ----- dialect/RewriteRules.md -----

GENERATOR = "tools/gen_dialect_docs.py"
SOURCE = "python/dnnf_mlir/rewriting/catalogue"

_FAMILY_TEXT = {
    "associative": "Regroup chains so that fewer or cheaper ops remain (Exp(A) ⊙ Exp(B) -> Exp(A + B)); "
    "the operand orders of commutative ops are tried while matching, which is the paper's commutative swap "
    "before an associative rule.",
    "distributive": "Factor a shared operand out so that one op does the work of two "
    "(A ⊙ B + A ⊙ C -> A ⊙ (B + C)), including linear ops (MatMul, Gemm, Conv) sharing an operand.",
    "commutative": "Swap two ops so that the elementwise work happens on fewer elements: unary ops move "
    "across data movement toward the smaller tensor, a reduction swaps with a unary op that maps its "
    "combining op (ReduceProd(Exp(A)) -> Exp(ReduceSum(A))), scalar factors move out of reductions and linear ops.",
    "strength": "The simplifications that always pay, applied by the greedy driver: identities, cancelling "
    "and absorbed pairs, no-op data movement, weight folding. They are not in the paper's tables.",
}


def _md(text: str) -> str:
    """Prose for a table cell: Markdown-escaped, one line, pipes escaped."""
    from ..ecg.docs import _cell, _escape

    return _cell(_escape(text)) if text else ""


def _plain(text: str) -> str:
    """Numbers and arrows for a table cell: no Markdown in them to escape."""
    from ..ecg.docs import _cell

    return _cell(text)


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def rules_markdown(rows=None) -> str:
    """The Markdown reference of the rule catalogue (``dialect/RewriteRules.md``)."""
    rows = rule_rows() if rows is None else rows
    counts = family_counts()
    lines = [
        "# ECG rewrite rules",
        "",
        f"<!-- Generated by {GENERATOR} from {SOURCE}; do not edit. -->",
        "",
        f"Generated from the rule catalogue in `{SOURCE}` by `{GENERATOR}`; do not edit by hand.",
        "`dnnf-opt --list-rewrite-rules` prints the same list.",
        "",
        "## What `ecg-rewrite` does",
        "",
        "The `ecg-rewrite` pass is DNNFusion's math-property graph rewriting (section 4.2), on every",
        "`func.func` of a module:",
        "",
        "- It applies the matching rule with the largest gain (FLOPs saved, then bytes read saved),",
        "  and repeats until no rule gains. Gains are estimated from the types before anything is built;",
        "  ops over constants only are folded and cost nothing; an intermediate result with other users",
        "  stays, so a rewrite that would compute it twice gains nothing and does not fire.",
        "- The ops with none of the three properties (associative, distributive, commutative) partition",
        "  the graph: no rule of those families matches through them. Matches are cached per op and only",
        "  a rewrite's neighbourhood is matched again, so a step costs what its surroundings cost.",
        "- A rule that gains nothing by itself (moving a scale across a Transpose) is an enabling step:",
        "  it is kept only when, within three such steps, a gaining rule matches next to what it built;",
        "  then they are committed together, otherwise it is undone.",
        "- The strength rules compete in the same search (so that A ⊙ Recip(B) -> A / B does not pre-empt",
        "  the paper's cheaper Recip(Square(A) ⊙ B)). MLIR's greedy pattern driver",
        "  (`apply_patterns_and_fold_greedily`) folds constants between rounds and applies the strength",
        "  rules once more at the end; it also erases the ops left dead.",
        "",
        "Every committed step lowers (FLOPs, bytes read), so the rewriting terminates. The pass option",
        "`only=GLOB|GLOB...` restricts it to the rules whose names match; `ecg-apply-rule{rule=NAME}`",
        "applies one rule once, whatever it gains.",
        "",
        "Notation: `A`, `B`, `C`, `X`, ... match any value (the same name the same value), `K1`, `K2`",
        "constants and `S1` a one-element constant; a number is a literal (a splat constant), `…` a value",
        "computed from the match. Ops are spelled as in the paper (`Recip` is `ecg.reciprocal`,",
        "`ReduceSum` is `ecg.reduce_sum`); `⊙` in the prose is Mul.",
        "",
        "The FLOPs column is measured on each rule's example: a function computing the rule's before",
        "form on float32 tensors of shape 2x3x4 (other types and shapes where the ops need them; built by",
        f"`dnnf_mlir.rewriting.examples.instantiate` with seed {SEED}), before and after one application",
        "of the rule. A rule with no gain there may still enable others, or gain on other shapes.",
        "",
        "## Rules per family",
        "",
        "| Family | Rules |",
        "|---|---|",
    ]
    for family in FAMILIES:
        lines.append(f"| [{family}](#{family}) | {counts[family]} |")
    lines += [f"| total | {counts['total']} |", ""]
    for family in FAMILIES:
        family_rows = [row for row in rows if row.family == family]
        lines += [
            f'<a id="{family}"></a>',
            "",
            f"## {family.title()} ({len(family_rows)})",
            "",
            _FAMILY_TEXT[family],
            "",
            "| Name | Before | After | FLOPs | Note |",
            "|---|---|---|---|---|",
        ]
        for row in family_rows:
            lines.append(
                f"| `{row.name}` | {_code(row.before)} | {_code(row.after)} | {_plain(row.flops_change)} | {_md(row.note)} |"
            )
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


__all__ = ["RuleRow", "rule_row", "rule_rows", "family_counts", "rules_by_op", "rules_markdown", "FAMILIES", "SEED"]
