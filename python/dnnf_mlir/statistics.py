"""Graph statistics over ECG functions: ops by mapping type, FLOPs, result bytes."""

from collections import Counter
from dataclasses import dataclass, field

from ._mlir import ir
from .ecg import ECGOp, MappingType


@dataclass
class GraphStatistics:
    """What a function computes, in the units DNNFusion reasons about."""

    ops: int = 0
    constants: int = 0
    by_mapping: Counter = field(default_factory=Counter)
    by_op: Counter = field(default_factory=Counter)
    flops: int = 0
    # Bytes of every intermediate result (constants excluded): what fusion can save.
    intermediate_bytes: int = 0
    constant_bytes: int = 0

    def to_json(self) -> dict:
        return {
            "ops": self.ops,
            "constants": self.constants,
            "ops_by_mapping_type": {m.value: self.by_mapping.get(m.value, 0) for m in MappingType},
            "ops_by_name": dict(sorted(self.by_op.items())),
            "flops": self.flops,
            "intermediate_bytes": self.intermediate_bytes,
            "constant_bytes": self.constant_bytes,
        }

    def summary(self) -> str:
        mapping = ", ".join(f"{m.value} {self.by_mapping.get(m.value, 0)}" for m in MappingType)
        return (
            f"{self.ops} ops ({mapping}), {self.constants} constants ({self.constant_bytes / 2**20:.1f} MiB)\n"
            f"{self.flops / 1e9:.3f} GFLOP, intermediate results {self.intermediate_bytes / 2**20:.1f} MiB"
        )


def function_statistics(function: ir.Operation) -> GraphStatistics:
    stats = GraphStatistics()
    for op in function.regions[0].blocks[0].operations:
        view = op.opview
        if not isinstance(view, ECGOp):
            continue
        if view.mnemonic == "constant":
            stats.constants += 1
            stats.constant_bytes += view.result_bytes()
            continue
        stats.ops += 1
        stats.by_mapping[view.mapping_type.value] += 1
        stats.by_op[view.mnemonic] += 1
        stats.flops += view.flops()
        stats.intermediate_bytes += view.result_bytes()
    return stats


def module_statistics(module) -> dict:
    """Statistics per function symbol name."""
    op = module.operation if hasattr(module, "operation") else module
    return {
        f.attributes["sym_name"].value: function_statistics(f)
        for f in op.regions[0].blocks[0].operations
        if f.operation.name == "func.func"
    }


def change(before, after, fmt: str = "{}", arrow: str = " -> ") -> str:
    """'a' when nothing changed, else 'a -> b' (or with another ``arrow``)."""
    a, b = fmt.format(before), fmt.format(after)
    return a if a == b else f"{a}{arrow}{b}"


def compare_summary(before: GraphStatistics, after: GraphStatistics) -> str:
    """``GraphStatistics.summary`` of a rewritten graph, each figure as before -> after."""
    mapping = ", ".join(
        f"{m.value} {change(before.by_mapping.get(m.value, 0), after.by_mapping.get(m.value, 0))}" for m in MappingType
    )
    mib = "{:.1f}"
    return (
        f"{change(before.ops, after.ops)} ops ({mapping}), {change(before.constants, after.constants)} constants "
        f"({change(before.constant_bytes / 2**20, after.constant_bytes / 2**20, mib)} MiB)\n"
        f"{change(before.flops / 1e9, after.flops / 1e9, '{:.3f}')} GFLOP, intermediate results "
        f"{change(before.intermediate_bytes / 2**20, after.intermediate_bytes / 2**20, mib)} MiB"
    )


def rewrite_summary(entry: dict) -> str:
    """One line on what ecg-rewrite did to a module, from a report with the keys of its
    ``total`` entry (ops/flops before/after, rules_applied by family) plus ``seconds``;
    ``enabled: False`` says it did not run."""
    before, after = entry["flops_before"], entry["flops_after"]
    scale, unit = next(((s, u) for s, u in ((1e9, "G"), (1e6, "M"), (1e3, "k")) if before >= s), (1, ""))
    if not entry.get("enabled", True):
        return f"ecg-rewrite: off ({entry['ops_after']} ops, {after / scale:.3f} {unit}FLOP)"
    families = ", ".join(f"{family} {n}" for family, n in entry["rules_applied"].items() if n) or "none"
    delta = f" ({(after - before) / before:+.3%})" if before else ""
    return (
        f"ecg-rewrite: {entry['ops_before']} -> {entry['ops_after']} ops, "
        f"{before / scale:.3f} -> {after / scale:.3f} {unit}FLOP{delta}; rules applied: {families}; {entry['seconds']:.2f} s"
    )
