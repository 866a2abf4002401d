"""The rewriting drivers: the paper's FLOPs-driven best-first search, and the MLIR
greedy driver for the simplifications that always pay.

``Search`` partitions a function at the ops with none of the three properties
(DNNFusion section 4.2); inside each partition it applies the matching rule with
the largest gain, and repeats until no rule gains. A rule that gains nothing by
itself (moving a scale across a Transpose) is applied only when, after it, a rule
that gains matches next to what it built: the pair is committed together, or the
enabling step is undone. Every committed step strictly lowers (FLOPs, bytes read),
so the search terminates.

``simplify`` hands the "strength" rules and constant folding to
``apply_patterns_and_fold_greedily`` as Python patterns; the greedy driver also
erases the ops left dead.
"""

from collections import Counter
from dataclasses import dataclass, field

from .._mlir import ir, rewrite
from ..ecg import OPS
from .matching import Gain, build, dead_ops, estimate, fold, is_constant, make_constant, owner_op

# How many enabling (zero-gain) steps may precede a gaining one.
ENABLING_DEPTH = 3
# How far above a rewrite (in users) its effects on other matches can reach: the
# deepest pattern in the catalogue.
NEIGHBOURHOOD = 4


@dataclass
class Applied:
    """A rewrite done in the IR but not yet committed: enough to undo it."""

    match: object
    created: list
    redirected: list  # (user op, operand index) that now read the new value
    old_value: ir.Value
    new_value: ir.Value
    dead: list


@dataclass
class Applications:
    """What a driver applied: rule name -> count."""

    rules: Counter = field(default_factory=Counter)

    def record(self, match):
        self.rules[match.rule.name] += 1


def ecg_ops(block):
    return [op.operation for op in block.operations if op.name.startswith("ecg.") and op.name != "ecg.constant"]


# ----- applying and undoing one rewrite -----


def apply_match(match, gone=frozenset()) -> Applied:
    """Build the rewrite and redirect the root's users to it; ``gone`` as in ``dead_ops``."""
    root = match.root
    old_value = root.results[0]
    created = []
    with ir.InsertionPoint(root), root.location:
        new_value = build(match.rule.rhs, match, created)
    redirected = [(use.owner, use.operand_number) for use in old_value.uses]
    dead = dead_ops(match, gone)
    old_value.replace_all_uses_with(new_value)
    return Applied(match, created, redirected, old_value, new_value, dead)


def apply_once(block, rule) -> bool:
    """Apply ``rule`` at its first match in ``block`` whatever it gains (testing, exploring)."""
    for op in ecg_ops(block):
        if op.name != "ecg." + rule.root:
            continue
        for match in rule.matches(op):
            if estimate(match) is not None:
                commit(apply_match(match))
                return True
    return False


def undo(applied: Applied):
    for user, index in applied.redirected:
        user.operands[index] = applied.old_value
    for op in reversed(applied.created):
        if not _has_uses(op):
            op.erase()


def commit(applied: Applied):
    """Erase what the rewrite left dead (in user-before-producer order), and the
    constants it no longer reads (weights replaced by their folded versions)."""
    pending = list(applied.dead) + list({owner_op(v) for v in applied.match.values.values() if is_constant(v)})
    while pending:
        remaining = [op for op in pending if _has_uses(op)]
        for op in pending:
            if op not in remaining:
                op.erase()
        if len(remaining) == len(pending):
            break
        pending = remaining


def _has_uses(op) -> bool:
    return any(True for result in op.results for _ in result.uses)


# ----- the best-first search -----


def partitions(block) -> dict:
    """op -> partition representative: connected components of the ops that have a property."""
    parent = {}

    def find(op):
        while parent[op] != op:
            parent[op] = parent[parent[op]]
            op = parent[op]
        return op

    ops = ecg_ops(block)
    for op in ops:
        parent[op] = op
    for op in ops:
        if not op.opview.algebra.has_rewrite_properties:
            continue
        for value in op.operands:
            producer = owner_op(value)
            if producer in parent and producer.opview.algebra.has_rewrite_properties:
                parent[find(producer)] = find(op)
    return {op: find(op) for op in ops}


class Search:
    """The best-first search over one function body with one set of rules."""

    def __init__(self, block, groups, applications: Applications):
        self.block = block
        self.groups = groups
        self.applications = applications
        # Ops replaced by a rewrite that is not committed yet: their uses do not count.
        self.gone = set()

    def candidates(self, ops):
        """(gain, match) for every match rooted at ``ops`` whose gain is positive or neutral."""
        found = []
        for op in ops:
            rules = self.groups.get(op.name[4:])
            if not rules or op in self.gone:
                continue
            for rule in rules:
                for match in rule.matches(op):
                    gain = estimate(match, self.gone)
                    if gain is not None and (gain or gain.neutral):
                        found.append((gain, match))
        return found

    def run(self, max_steps=100000) -> int:
        """Apply the best-gaining rule per partition until none gains; return the step count."""
        steps = 0
        while steps < max_steps:
            part = partitions(self.block)
            found = self.candidates(part)
            best = {}
            for gain, match in found:
                key = part[match.root]
                if gain and (key not in best or gain > best[key][0]):
                    best[key] = (gain, match)
            touched = set()
            progressed = False
            for gain, match in sorted(best.values(), key=lambda item: item[0], reverse=True):
                if _footprint(match) & touched:
                    continue
                touched |= _footprint(match)
                self._commit(apply_match(match))
                steps += 1
                progressed = True
            if progressed:
                continue
            enabling = [match for gain, match in found if gain.neutral]
            if not any(self._try_enabling(match, ENABLING_DEPTH) for match in enabling):
                break
            steps += 1
        return steps

    def _commit(self, applied: Applied):
        commit(applied)
        self.applications.record(applied.match)

    def _try_enabling(self, match, depth) -> bool:
        """Apply a neutral rewrite; keep it only if a gaining one follows within ``depth`` steps."""
        applied = apply_match(match, self.gone)
        self.gone.update(applied.dead)
        found = self.candidates(_neighbourhood(applied))
        gaining = [(gain, m) for gain, m in found if gain]
        kept = False
        if gaining:
            gain, best = max(gaining, key=lambda item: item[0])
            second = apply_match(best, self.gone)
            self.gone.difference_update(applied.dead)
            self._commit(second)
            kept = True
        elif depth > 1:
            kept = any(
                m.rule is not match.rule and self._try_enabling(m, depth - 1) for gain, m in found if gain.neutral
            )
        self.gone.difference_update(applied.dead)
        if kept:
            self._commit(applied)
        else:
            undo(applied)
        return kept


def _footprint(match):
    return set(match.matched) | {owner_op(v) for v in match.values.values()} - {None}


def _neighbourhood(applied: Applied) -> list:
    """The ops whose matches the rewrite may have changed: what it built and their users."""
    ops = [op for op in applied.created if op.name != "ecg.constant"]
    frontier = [applied.new_value]
    seen = set(ops)
    for _ in range(NEIGHBOURHOOD):
        next_frontier = []
        for value in frontier:
            for use in value.uses:
                user = use.owner
                if user.name.startswith("ecg.") and user not in seen:
                    seen.add(user)
                    ops.append(user)
                    next_frontier.extend(user.results)
        frontier = next_frontier
    return ops


# ----- the greedy driver -----


def simplify(function, groups, applications: Applications):
    """Apply the always-profitable rules and constant folding with MLIR's greedy driver."""
    patterns = rewrite.RewritePatternSet(function.context)
    for mnemonic in OPS:
        if mnemonic in ("constant", "yield", "fused"):
            continue
        rules = groups.get(mnemonic, [])
        patterns.add(f"ecg.{mnemonic}", _greedy_pattern(rules, applications))
    config = rewrite.GreedyRewriteConfig()
    config.max_iterations = 20
    rewrite.apply_patterns_and_fold_greedily(function, patterns.freeze(), config)


def _greedy_pattern(rules, applications):
    def pattern(op, rewriter):
        operation = op.operation
        folded = fold(type(op), list(operation.operands), op.attrs)
        if folded is not None:
            with rewriter.ip, operation.location:
                rewriter.replace_op(operation, [make_constant(folded, [])])
            return False
        for rule in rules:
            for match in rule.matches(operation):
                if estimate(match):
                    with rewriter.ip, operation.location:
                        value = build(rule.rhs, match, [])
                    rewriter.replace_op(operation, [value])
                    applications.record(match)
                    return False
        return True

    return pattern
