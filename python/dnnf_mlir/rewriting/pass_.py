"""The ``ecg-rewrite`` pass: rewrite each function, report what changed as JSON."""

import fnmatch
from collections import Counter
import time

from ..statistics import function_statistics
from ..transforms.pass_base import ModulePass, PassError, write_stats
from ..transforms.registry import described_by_table
from .catalogue import catalogue
from .driver import Applications, Search, apply_once, simplify
from .rules import FAMILIES

# Rounds of (simplify, best-first search); a round that changes nothing ends it early.
MAX_ROUNDS = 4


def selected_rules(only: str):
    """The names of the rules matching the '|'-separated globs (None: all rules)."""
    if not only:
        return None
    patterns = only.split("|")
    names = {r.name for r in catalogue() if any(fnmatch.fnmatchcase(r.name, p) for p in patterns)}
    if not names:
        raise PassError(f"no rewrite rule matches '{only}' (dnnf-opt --list-rewrite-rules lists them)")
    return names


def rewrite_function(function, only: str = "") -> dict:
    """Rewrite one func.func in place; return its statistics entry."""
    rules = catalogue().by_root(selected_rules(only))
    strength = {root: [r for r in group if r.family == "strength"] for root, group in rules.items()}
    before = function_statistics(function)
    applications = Applications()
    # All rules compete in the search (the strength rules too: A ⊙ Recip(B) -> A / B
    # must not pre-empt the paper's cheaper Recip(Square(A) ⊙ B)); the greedy driver
    # folds constants first and finishes with the strength rules.
    search = Search(function.regions[0].blocks[0], rules, applications)
    for _ in range(MAX_ROUNDS):
        count = sum(applications.rules.values())
        simplify(function, {}, applications)
        search.run()
        if sum(applications.rules.values()) == count:
            break
    simplify(function, strength, applications)
    after = function_statistics(function)
    return _entry(before, after, applications.rules)


def _entry(before, after, applied) -> dict:
    by_family = {family: 0 for family in FAMILIES}
    rules = catalogue().rules
    for name, count in applied.items():
        by_family[rules[name].family] += count
    return {
        "ops_before": before.ops,
        "ops_after": after.ops,
        "flops_before": before.flops,
        "flops_after": after.flops,
        "rules_applied": by_family,
        "rules": dict(sorted(applied.items())),
    }


def rewrite_module(module, only: str = "") -> dict:
    """Rewrite every function of ``module``; return the statistics report."""
    start = time.perf_counter()
    op = module.operation if hasattr(module, "operation") else module
    functions = {}
    for function in op.regions[0].blocks[0].operations:
        if function.operation.name == "func.func":
            functions[function.attributes["sym_name"].value] = rewrite_function(function.operation, only)
    total = {key: sum(f[key] for f in functions.values()) for key in ("ops_before", "ops_after", "flops_before", "flops_after")}
    total["rules_applied"] = {family: sum(f["rules_applied"][family] for f in functions.values()) for family in FAMILIES}
    rules = Counter()
    for function in functions.values():
        rules.update(function["rules"])
    total["rules"] = dict(sorted(rules.items()))
    return {"functions": functions, "total": total, "seconds": round(time.perf_counter() - start, 3)}


@described_by_table
class RewritePass(ModulePass):
    """Rewrites ECG functions with the rule catalogue (``dnnf-opt --list-rewrite-rules``)."""

    NAME = "ecg-rewrite"

    def run(self, module):
        report = rewrite_module(module, self.options["only"])
        if self.options["stats-file"]:
            write_stats(report, self.options["stats-file"])


@described_by_table
class ApplyRulePass(ModulePass):
    """Applies one rule once per function, gain or not: rules that only enable others
    can be tried by hand, and the lit tests check every rule's rewrite this way."""

    NAME = "ecg-apply-rule"

    def run(self, module):
        rules = catalogue().rules
        for function in module.regions[0].blocks[0].operations:
            if function.operation.name != "func.func":
                continue
            name = self.options["rule"] or function.attributes["sym_name"].value
            if name not in rules:
                raise PassError(f"unknown rewrite rule '{name}' (dnnf-opt --list-rewrite-rules lists them)", function)
            if not apply_once(function.regions[0].blocks[0], rules[name]):
                raise PassError(f"rule '{name}' does not match @{function.attributes['sym_name'].value}", function)
