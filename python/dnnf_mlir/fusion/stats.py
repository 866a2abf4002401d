"""What fusion did, as JSON: per function and in total (``ecg-fuse{stats-file=...}``).

``ops`` count the ECG ops that compute (constants excluded); ``layers`` what runs
after fusion: one per ``ecg.fused`` op plus one per op left unfused. ``ir_bytes``
are the bytes of intermediate results that are materialised: before fusion every
op's results, after it the results of the layers (a value inside a block whose
consumers are all in it, IR_removable, is never written). As the paper's Table 5 does,
layers are split into compute-intensive ones (holding a convolution or a matrix
product) and memory-intensive ones (the rest).
"""

from ..ecg import ECGOp
from .constraints import CONTRACTIONS

# Keys summed over functions into the report's "total".
_SUMMED = ("ops_before", "blocks", "ops_fused", "ops_after", "ir_bytes_before", "ir_bytes_after",
           "compute_layers_before", "compute_layers_after")


def layer_statistics(function) -> dict:
    """Layers (and the compute-intensive ones), fused ops, the ops inside them and
    materialised result bytes of a function as it is."""
    layers = compute = fused = inside = ir_bytes = 0
    for op in function.regions[0].blocks[0].operations:
        view = op.operation.opview
        if not isinstance(view, ECGOp) or view.mnemonic == "constant":
            continue
        layers += 1
        ir_bytes += view.result_bytes()
        ops = [view]
        if view.mnemonic == "fused":
            fused += 1
            ops = [o.operation.opview for o in view.body_ops if o.operation.name not in ("ecg.constant", "ecg.yield")]
            inside += len(ops)
        compute += any(o.mnemonic in CONTRACTIONS for o in ops)
    return {"layers": layers, "compute_layers": compute, "fused": fused, "ops_in_fused": inside, "ir_bytes": ir_bytes}


def function_report(plan, before, layers_before: dict, after: dict) -> dict:
    """The report entry of one function: ``before`` its ``GraphStatistics`` and
    ``layers_before`` its ``layer_statistics`` before fusion, ``after`` its
    ``layer_statistics`` after, ``plan`` what the planner decided."""
    return {
        "ops_before": before.ops,
        "compute_layers_before": layers_before["compute_layers"],
        "compute_layers_after": after["compute_layers"],
        "blocks": after["fused"],
        "ops_fused": after["ops_in_fused"],
        "ops_after": after["layers"],
        "decisions": plan.decisions.to_json(),
        "ir_bytes_before": before.intermediate_bytes,
        "ir_bytes_after": after["ir_bytes"],
        "seconds": round(plan.seconds, 3),
    }


def module_report(mode: str, functions: dict, seconds: float) -> dict:
    """The report over all functions: per function, the sums, the planner's time."""
    total = {key: sum(f[key] for f in functions.values()) for key in _SUMMED}
    decisions = {"table": {}, "oracle": {}, "constraints": {}, "horizontal": {}, "attention": {}}
    for entry in functions.values():
        for group, counts in entry["decisions"].items():
            for key, count in counts.items():
                decisions[group][key] = decisions[group].get(key, 0) + count
    total["decisions"] = decisions
    return {"mode": mode, "functions": functions, "total": total, "seconds": round(seconds, 3)}


def fusion_summary(report: dict) -> str:
    """One line on what ecg-fuse did, from its report."""
    t = report["total"]
    table = t["decisions"].get("table", {})
    oracle = t["decisions"].get("oracle", {})
    horizontal = t["decisions"].get("horizontal", {})
    attention = t["decisions"].get("attention", {})
    memory_before = t["ops_before"] - t["compute_layers_before"]
    memory_after = t["ops_after"] - t["compute_layers_after"]
    return (
        f"ecg-fuse ({report['mode']}): {t['ops_before']} ops -> {t['ops_after']} layers "
        f"({t['blocks']} fused blocks of {t['ops_fused']} ops; compute-intensive {t['compute_layers_before']} -> "
        f"{t['compute_layers_after']}, memory-intensive {memory_before} -> {memory_after}); Table 3 G {table.get('G', 0)} / Y {table.get('Y', 0)} "
        f"/ R {table.get('R', 0)}, Y accepted {oracle.get('accepted', 0)} of {sum(oracle.values())}; "
        f"horizontal: {horizontal.get('contractions', 0)} contractions merged into {horizontal.get('groups', 0)}; "
        f"attention blocks: {attention.get('blocks', 0)}; "
        f"intermediate results {t['ir_bytes_before'] / 2**20:.1f} -> {t['ir_bytes_after'] / 2**20:.1f} MiB; "
        f"{report['seconds']:.2f} s" + _profile_summary(report.get("profile"))
    )


def _profile_summary(profile) -> str:
    if not profile:
        return ""
    return (f"; profiling database: {profile['hits']} hits, {profile['misses']} misses "
            f"({profile['measured']} measured)")
