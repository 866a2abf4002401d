"""The rewriting drivers: the paper's FLOPs-driven best-first search, and the MLIR
greedy driver for constant folding and the simplifications that always pay.

``Search`` (DNNFusion section 4.2) applies the matching rule with the largest
gain and repeats until no rule gains; the ops with none of the three properties
partition the graph, as no rule of the three families matches through them. A
rule that gains nothing by itself (moving a scale across a Transpose) is applied
only when a gaining rule then matches next to what it built (within
``ENABLING_DEPTH`` steps): the chain is committed together, or undone. Every
committed chain strictly lowers (FLOPs, bytes read), so the search terminates.

``simplify`` hands constant folding and the given rules to
``apply_patterns_and_fold_greedily`` as Python patterns; the greedy driver also
erases the ops left dead.
"""

import heapq
import itertools
from collections import Counter
from dataclasses import dataclass, field

from .._mlir import ir, rewrite
from ..ecg import OPS
from .matching import build, dead_ops, estimate, fold, is_constant, make_constant, op_key, owner_op

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


def _has_properties(op) -> bool:
    return op.opview.algebra.has_rewrite_properties


class Search:
    """The best-first search over one function body.

    Matches are cached per root op and kept in a heap by gain; after a rewrite only
    the ops whose matches it can have changed are matched again (``_neighbourhood``), so
    a step costs what its neighbourhood costs, not the function. The paper's
    partitions: a rule of the three families never matches through an op that has
    none of the properties (such an op can only be the root or a leaf of a match),
    and the global best-first order is best-first inside every partition.
    """

    def __init__(self, block, groups, applications: Applications):
        self.block = block
        self.groups = groups
        self.applications = applications
        # Ops replaced by rewrites not committed yet: their uses do not count.
        self.gone = set()
        self.cache = {}  # op_key(root) -> [(gain, match)] with a positive or neutral gain
        self.heap = []  # (-flops, -bytes, tie, match) of the cached gaining matches
        # ids of the cached matches, and of the neutral ones whose lookahead failed
        # (erased ops cannot be hashed, so the heap refers to matches, not ops).
        self.live, self.tried = set(), set()
        self.tie = itertools.count()

    def candidates(self, ops):
        """(gain, match) for every match rooted at ``ops`` whose gain is positive or neutral."""
        found = []
        for op in ops:
            rules = self.groups.get(op.name[4:])
            if not rules or op_key(op) in self.gone:
                continue
            for rule in rules:
                for match in rule.matches(op):
                    if rule.family != "strength" and not all(_has_properties(m) for m in match.matched[1:]):
                        continue
                    gain = estimate(match, self.gone)
                    if gain is not None and (gain or gain.neutral):
                        found.append((gain, match))
        return found

    def run(self, max_steps=100000) -> int:
        """Apply the best-gaining rewrite until none gains (or enables one that does)."""
        self.cache, self.heap, self.live, self.tried = {}, [], set(), set()
        self._rescan(ecg_ops(self.block))
        steps = 0
        while steps < max_steps:
            match = self._pop_best()
            if match is not None:
                self._commit(apply_match(match))
                steps += 1
                continue
            chain = self._enabling_chain()
            if chain is None:
                break
            for position, applied in enumerate(chain):
                self.gone = {op_key(op) for later in chain[position + 1:] for op in later.dead}
                self._commit(applied)
            steps += len(chain)
        return steps

    def _rescan(self, ops):
        for op in ops:
            self._drop(op)
            self.cache[op_key(op)] = found = self.candidates([op])
            for gain, match in found:
                self.live.add(id(match))
                if gain:
                    heapq.heappush(self.heap, (-gain.flops, -gain.bytes_read, next(self.tie), match))

    def _drop(self, op):
        for _, match in self.cache.pop(op_key(op), ()):
            self.live.discard(id(match))
            self.tried.discard(id(match))

    def _pop_best(self):
        while self.heap:
            match = heapq.heappop(self.heap)[-1]
            if id(match) in self.live:
                return match
        return None

    def _commit(self, applied: Applied):
        """Commit a rewrite and re-match the ops it affected."""
        dead = set(applied.dead)
        # Constants are never roots, and the other producers survive the commit.
        producers = {owner_op(v) for op in applied.dead + applied.created for v in op.operands} - dead - {None}
        producers = [op for op in producers if op.name != "ecg.constant"]
        for op in dead:
            self._drop(op)
        commit(applied)
        self.applications.record(applied.match)
        self._rescan(_neighbourhood(applied, producers))

    def _enabling_chain(self):
        """Neutral rewrites then a gaining one (applied, not committed), or None."""
        for found in list(self.cache.values()):
            for gain, match in found:
                if gain.neutral and id(match) not in self.tried and id(match) in self.live:
                    chain = self._lookahead(match, ENABLING_DEPTH)
                    if chain:
                        return chain
                    self.tried.add(id(match))
        return None

    def _lookahead(self, match, depth):
        """Apply a neutral rewrite and what it enables within ``depth`` steps; undo it if nothing."""
        applied = apply_match(match, self.gone)
        self.gone.update(op_key(op) for op in applied.dead)
        found = self.candidates(_neighbourhood(applied))
        chain = None
        gaining = [(gain, m) for gain, m in found if gain]
        if gaining:
            chain = [applied, apply_match(max(gaining, key=lambda item: item[0])[1], self.gone)]
        elif depth > 1:
            for gain, m in found:
                if gain.neutral and m.rule is not match.rule:
                    rest = self._lookahead(m, depth - 1)
                    if rest:
                        chain = [applied] + rest
                        break
        if chain is None:
            self.gone.difference_update(op_key(op) for op in applied.dead)
            undo(applied)
        return chain


def _users_within(values, depth) -> list:
    """The ECG ops using ``values``, and their users, up to ``depth`` levels up."""
    ops, seen, frontier = [], set(), list(values)
    for _ in range(depth):
        next_frontier = []
        for value in frontier:
            for use in value.uses:
                user = use.owner.operation
                if user.name.startswith("ecg.") and op_key(user) not in seen:
                    seen.add(op_key(user))
                    ops.append(user)
                    next_frontier.extend(user.results)
        frontier = next_frontier
    return ops


def _neighbourhood(applied: Applied, producers=()) -> list:
    """The ops whose matches a rewrite may have changed: what it built, the users of
    its result, and the users of every op whose use count it changed (``producers``:
    their matches may now own, or share, that op)."""
    created = [op for op in applied.created if op.name != "ecg.constant"]
    values = [applied.new_value] + [result for op in producers for result in op.results]
    ops = created + list(producers) + _users_within(values, NEIGHBOURHOOD)
    return list({op_key(op): op for op in ops}.values())


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
