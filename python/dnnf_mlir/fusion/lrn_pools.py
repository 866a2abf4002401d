"""LRN into the pooling that reads it: one kernel where Table 3 makes two (GPU targets).

AlexNet and ZFNet compute conv | relu + LRN | max-pool: the LRN and the pooling are both
Many-to-Many, a red cell, so the normalized tensor is written out and read back by a
kernel of its own. Where a dispatch costs more than the arithmetic (the GPU targets'
``GpuDevice.lrn_in_pools``), the pooling can read LRN(x) at each of its window's points
instead, computing it again where windows overlap (a 3x3 / 2 pooling about 2.25 times):
the unit holding the LRN merges into the unit holding the pooling when

- the LRN's result is read by that pooling only (nothing else, not returned);
- the pooling reads it unpadded (no pads, no ceil mode): a GPU kernel pads a value it
  computes by gathering from it, which it computes first, a dispatch of its own
  (``codegen/gpu/kernels.GatherError``), so a padded pooling would save no dispatch;
- neither unit holds a contraction (a convolution's tiles would be computed again);
- the union closes no cycle and stays within the fused op's limits.
"""

from ..ecg.properties import MappingType
from .constraints import CONTRACTIONS, limits_violation
from .plan import Block, FusionPlan

POOLINGS = frozenset({"max_pool", "average_pool"})


def _unpadded(pooling) -> bool:
    attrs = pooling.operation.opview.attrs
    return (not any(attrs["pads"]) and attrs["auto_pad"] in ("NOTSET", "VALID") and not attrs["ceil_mode"])


def _pair(graph, unit_of: dict, lrn: int):
    """(LRN unit, pooling unit) when the LRN ``lrn`` is read by one unpadded pooling only,
    else None."""
    (result,) = graph.results[lrn]
    users = graph.users[result]
    if (len(users) != 1 or graph.external[result] or graph.nodes[users[0]].mnemonic not in POOLINGS
            or not _unpadded(graph.nodes[users[0]])):
        return None
    first, second = unit_of[lrn], unit_of[users[0]]
    if first == second or any(graph.nodes[m].mnemonic in CONTRACTIONS for m in first | second):
        return None
    return first, second


def fuse_lrn_pools(plan: FusionPlan) -> FusionPlan:
    """``plan`` with each LRN's unit merged into the unit of the pooling reading it
    (Many-to-Many); the function body is not changed."""
    graph = plan.graph
    in_blocks = {m: block.members for block in plan.blocks for m in block.members}
    unit_of = {n: frozenset(in_blocks.get(n, {n})) for n, node in enumerate(graph.nodes) if node.fusable}
    merged = []
    for lrn in (n for n in unit_of if graph.nodes[n].mnemonic == "lrn"):
        pair = _pair(graph, unit_of, lrn)
        if pair is None:
            continue
        union = frozenset(pair[0] | pair[1])
        if graph.closes_cycle(set(union)):
            plan.decisions.constraints["cycle"] += 1
            continue
        violation = limits_violation(graph, set(union), plan.limits)
        if violation:
            plan.decisions.constraints[violation] += 1
            continue
        graph.commit(set(union))
        merged = [unit for unit in merged if not unit & union] + [union]
        for member in union:
            unit_of[member] = union
    if not merged:
        return plan
    absorbed = frozenset().union(*merged)
    plan.blocks = [block for block in plan.blocks if not block.members & absorbed] + [
        Block(set(union), MappingType.MANY_TO_MANY) for union in merged
    ]
    return plan


__all__ = ["fuse_lrn_pools"]
