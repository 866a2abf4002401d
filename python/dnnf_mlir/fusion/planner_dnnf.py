"""DNNFusion's fusion plan generation (the paper's Listing 1, DESIGN.md section 7).

Seeds are the unfused One-to-One ops, smallest intermediate result first (ties in
program order), then the unfused Reorganize and Shuffle ops (``SEED_TIERS``). A seed's block grows through successors (recursively), then through
predecessors (recursively; an op with several predecessors may take only some).
Each candidate is classified against the block by Table 3 -- the block's current
type on the producer side for a successor, on the consumer side for a predecessor --
then checked for legality (``constraints``), and a Y cell goes to the oracle. The
block takes the cell's type. A block's ops leave the unfused set even when the
seed found nothing to fuse with; a block of one op is left as it is.
"""

from ..ecg.properties import MappingType
from .constraints import feeds_contraction, joined_domain, limits_violation, splits_byte_conversion
from .plan import Block, FusionPlan
from .table import Decision, classify


class _Growth:
    """One block being grown from its seed."""

    def __init__(self, plan: FusionPlan, oracle, unfused: set, seed: int):
        self.plan, self.graph, self.oracle, self.unfused = plan, plan.graph, oracle, unfused
        node = self.graph.nodes[seed]
        self.block = Block({seed}, node.mapping)
        self.domain = node.result_shapes[0]

    def grow(self, start: int, neighbours) -> None:
        """Depth first from ``start`` over ``neighbours`` (succs or preds), taking what may fuse."""
        stack = [iter(neighbours[start])]
        while stack:
            candidate = next(stack[-1], None)
            if candidate is None:
                stack.pop()
            elif self.join(candidate, as_successor=neighbours is self.graph.succs):
                stack.append(iter(neighbours[candidate]))

    def join(self, candidate: int, as_successor: bool) -> bool:
        graph, block, decisions = self.graph, self.block, self.plan.decisions
        node = graph.nodes[candidate]
        if candidate in block.members or candidate not in self.unfused or not node.fusable:
            return False
        cell = classify(block.mapping, node.mapping) if as_successor else classify(node.mapping, block.mapping)
        decisions.table(cell.decision)
        if cell.decision is Decision.FUSE_BREAK:
            return False
        domain = self.domain
        if node.mapping is MappingType.ONE_TO_ONE:
            domain = joined_domain(self.domain, node.result_shapes[0])
        elif node.mapping is MappingType.ONE_TO_MANY and as_successor:
            # The ops after it iterate over its result: a Resize or Expand enlarges the
            # domain of the element-wise ops that follow it (Relu -> Resize -> Add).
            domain = node.result_shapes[0]
        joined = block.members | {candidate}
        violation = (
            "contraction-operand" if feeds_contraction(graph, block.members, candidate)
            else "byte-conversion" if self.plan.limits.byte_contractions and splits_byte_conversion(
                graph, block.members, candidate)
            else "shape" if domain is None
            else "cycle" if graph.creates_cycle(block.members, candidate)
            else limits_violation(graph, joined, self.plan.limits)
        )
        if violation:
            decisions.constraints[violation] += 1
            return False
        if cell.decision is Decision.FUSE_DEPEND:
            ops = [graph.nodes[m].operation.opview for m in block.ordered()]
            accepted = self.oracle.decide(ops, node.operation.opview, cell)
            decisions.oracle["accepted" if accepted else "rejected"] += 1
            if not accepted:
                return False
        block.members = joined
        block.mapping = cell.mapping
        self.domain = domain
        return True


# Listing 1 seeds on One-to-One ops. Once none is left, the Reorganize and Shuffle ops
# still unfused seed blocks the same way: Table 3 treats them as index-remapped
# One-to-One ops, and transformers have chains of them with no elementwise op to
# seed from (MatMul -> Reshape -> Transpose -> MatMul in every attention head).
SEED_TIERS = ((MappingType.ONE_TO_ONE,), (MappingType.REORGANIZE, MappingType.SHUFFLE))


def plan_dnnf(plan: FusionPlan, oracle) -> FusionPlan:
    """Fill ``plan`` (an empty plan over its graph) with Listing 1's blocks."""
    graph = plan.graph
    unfused = {index for index, node in enumerate(graph.nodes) if node.fusable}
    seeds = [
        index
        for tier in SEED_TIERS
        for index in sorted(
            (index for index in unfused if graph.nodes[index].mapping in tier),
            key=lambda index: (graph.nodes[index].result_bytes, index),
        )
    ]
    for seed in seeds:
        if seed not in unfused:
            continue
        growth = _Growth(plan, oracle, unfused, seed)
        growth.grow(seed, graph.succs)
        for member in growth.block.ordered():
            growth.grow(member, graph.preds)
        unfused -= growth.block.members
        if len(growth.block.members) > 1:
            graph.commit(growth.block.members)
            plan.blocks.append(growth.block)
    return plan
