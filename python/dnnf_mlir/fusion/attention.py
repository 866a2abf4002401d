"""Attention blocks: scores = Q @ K^T, a softmax over their rows, then probs @ V, in one block.

Table 3 never fuses two Many-to-Many ops (R), so after Listing 1 an attention head is
three layers: the scores matmul, a block of the mask add and the softmax, and the
probabilities matmul with its transposes. Both intermediates (batch x heads x seq x
seq each) are written and read back; on MobileBERT they are a fifth of all
intermediate bytes. Yet the chain is row-local: row i of the output needs row i of
the scores and of the probabilities only, so one kernel can compute it a tile of
rows at a time (flash attention), the scores never leaving the cache. Every peer
fuses it (onnxruntime's Attention, IREE's attention op); it is the one exception to
the R cell made here, and a narrow one:

- the consumer contraction reads the softmax (over the last axis) as its left operand
  and a computed tensor, not weights, as its right one (V);
- the unit holding the softmax holds no contraction, and the unit producing the
  softmax's input holds one matmul of two computed tensors (Q and K);
- the three units (blocks, or ops fused into nothing) merge when that closes no
  cycle and the union stays within the fused op's limits.

Contractions with constant weights never take a producer (``constraints.CONTRACTIONS``):
their kernels pack the weights, and a weight matrix repacked per row tile would cost
more than the intermediate it saves.
"""

from ..ecg.properties import MappingType
from ..rewriting.matching import is_constant
from .constraints import limits_violation
from .plan import Block, FusionPlan


def _contractions(graph, members) -> list:
    return [m for m in members if graph.nodes[m].mnemonic == "mat_mul"]


def _of_computed(graph, node: int) -> bool:
    """A matmul of two computed tensors (activations), not of an input and weights."""
    return not any(is_constant(graph.values[vid]) for vid in graph.operands[node])


def _chain(graph, unit_of: dict, softmax: int):
    """(scores unit, softmax unit, output unit) of the attention chain through
    ``softmax``, or None when it is not one."""
    node = graph.nodes[softmax]
    view = node.operation.opview
    rank = len(node.result_shapes[0])
    if view.attrs["axis"] not in (-1, rank - 1):
        return None
    middle = unit_of[softmax]
    if _contractions(graph, middle):
        return None
    (probs,) = graph.results[softmax]
    users = graph.users[probs]
    if len(users) != 1 or graph.external[probs]:
        return None
    (consumer,) = users
    if (graph.nodes[consumer].mnemonic != "mat_mul" or graph.operands[consumer][0] != probs
            or not _of_computed(graph, consumer)):
        return None
    producers = [
        graph.producer[vid] for vid in graph.inputs(middle)
        if graph.producer[vid] >= 0 and graph.nodes[graph.producer[vid]].mnemonic == "mat_mul"
    ]
    if len(producers) != 1 or not _of_computed(graph, producers[0]):
        return None
    first, last = unit_of[producers[0]], unit_of[consumer]
    if len(_contractions(graph, first)) != 1 or len(_contractions(graph, last)) != 1:
        return None
    return first, middle, last


def fuse_attention(plan: FusionPlan) -> FusionPlan:
    """``plan`` with every attention chain's three units merged into one block
    (Many-to-Many); the function body is not changed."""
    graph = plan.graph
    in_blocks = {m: block.members for block in plan.blocks for m in block.members}
    unit_of = {n: in_blocks.get(n, frozenset({n})) for n, node in enumerate(graph.nodes) if node.fusable}
    merged = []
    for softmax in (n for n in unit_of if graph.nodes[n].mnemonic == "softmax"):
        chain = _chain(graph, unit_of, softmax)
        if chain is None:
            continue
        union = set().union(*chain)
        if graph.closes_cycle(union):
            plan.decisions.constraints["cycle"] += 1
            continue
        violation = limits_violation(graph, union, plan.limits)
        if violation:
            plan.decisions.constraints[violation] += 1
            continue
        graph.commit(union)
        merged.append(union)
        for member in union:
            unit_of[member] = union
        plan.decisions.attention["blocks"] += 1
    if not merged:
        return plan
    absorbed = set().union(*merged)
    plan.blocks = [block for block in plan.blocks if not block.members & absorbed] + [
        Block(union, MappingType.MANY_TO_MANY) for union in merged
    ]
    return plan
