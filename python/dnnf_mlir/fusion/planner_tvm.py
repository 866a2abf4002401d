"""TVM's fixed-pattern fusion (Relay's FuseOps), the baseline the paper compares with.

Every op gets one of TVM's pattern kinds; an op fuses into its immediate
post-dominator when every op on every path between them allows it:

- complex-out-fusable (convolution, dense/batch matmul, pooling) takes elementwise
  and broadcast consumers when the edge pattern to its post-dominator is elementwise;
- elementwise / broadcast ops fuse into an injective or reduction post-dominator
  through elementwise, broadcast or injective ops (the last one may already hold a
  complex-out-fusable op);
- injective ops (data movement) fuse through injective ops, in a second phase so that
  the complex ops finish first; reductions start no fusion; opaque ops never fuse.

The kinds follow Relay's registrations (its newest: softmax complex-out-fusable,
where TVM 0.7 had it opaque): unary math ops elementwise, binary ones broadcast (an
edge whose operand already has the result's shape counts as elementwise),
reshape/transpose/slice/concat/pad/gather/resize injective, LRN opaque.
Layer/instance normalization, one op here, is decomposed by Relay
(SimplifyInference) into mean and variance reductions and an elementwise tail:
three kernels that take no producer or consumer of the op, as the reductions stop
every path. It counts as opaque here: the same boundaries, one layer instead of three.
"""

import enum

from ..ecg.properties import MappingType
from .constraints import limits_violation
from .plan import Block, FusionPlan
from .table import combined_mapping


class Kind(enum.IntEnum):
    """TVM's OpPatternKind (the values order them, as TVM's checks compare them)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    OPAQUE = 8


OUT_ELEMWISE_FUSABLE = frozenset({
    "conv", "conv_transpose", "gemm", "mat_mul", "max_pool", "average_pool", "global_average_pool", "global_max_pool",
    "softmax", "log_softmax",
})
OPAQUE = frozenset({"lrn", "layer_normalization", "instance_normalization"})
BROADCAST = frozenset({"expand"})  # broadcast_to


def op_kind(graph, index: int) -> Kind:
    node = graph.nodes[index]
    if not node.fusable or node.mnemonic in OPAQUE:
        return Kind.OPAQUE
    if node.mnemonic in OUT_ELEMWISE_FUSABLE:
        return Kind.OUT_ELEMWISE_FUSABLE
    if node.mnemonic in BROADCAST:
        return Kind.BROADCAST
    if node.mapping is MappingType.MANY_TO_MANY:
        return Kind.COMM_REDUCE
    if node.mapping is MappingType.ONE_TO_ONE:
        unary = len(graph.operands[index]) == 1 or node.mnemonic == "clip"
        return Kind.ELEMWISE if unary else Kind.BROADCAST
    return Kind.INJECTIVE


class _Partitioner:
    def __init__(self, graph, limits):
        self.graph = graph
        self.limits = limits
        count = len(graph)
        self.kind = [op_kind(graph, i) for i in range(count)]
        # Forward edges with their patterns: the consumer's kind, elementwise for a
        # broadcast consumer whose operand has the result's shape.
        self.outputs = [[] for _ in range(count)]
        for consumer in range(count):
            shape = graph.nodes[consumer].result_shapes[0]
            for vid in graph.operands[consumer]:
                producer = graph.producer[vid]
                if producer < 0:
                    continue
                pattern = self.kind[consumer]
                if pattern is Kind.BROADCAST and graph.shape(vid) == shape:
                    pattern = Kind.ELEMWISE
                self.outputs[producer].append((consumer, pattern))
        self.extern = [any(graph.external[v] for v in graph.results[i]) for i in range(count)]
        self.parent, self.depth, self.dom_pattern = [None] * count, [1] * count, [Kind.OPAQUE] * count
        for index in reversed(range(count)):
            self._post_dominator(index)
        self.root = list(range(count))
        self.group_kind = list(self.kind)
        self.anchor = [k is Kind.OUT_ELEMWISE_FUSABLE for k in self.kind]
        self.members = [[i] for i in range(count)]

    def _post_dominator(self, index: int):
        if self.extern[index] or not self.outputs[index]:
            return
        (parent, pattern), *others = self.outputs[index]
        for consumer, edge in others:
            parent, pattern = self._lca(parent, consumer, pattern)
            pattern = max(pattern, edge)
        self.parent[index], self.dom_pattern[index] = parent, pattern
        self.depth[index] = self.depth[parent] + 1 if parent is not None else 1

    def _lca(self, lhs, rhs, pattern):
        while lhs != rhs:
            if lhs is None or rhs is None:
                return None, pattern
            if self.depth[lhs] < self.depth[rhs]:
                pattern, rhs = max(pattern, self.dom_pattern[rhs]), self.parent[rhs]
            elif self.depth[rhs] < self.depth[lhs]:
                pattern, lhs = max(pattern, self.dom_pattern[lhs]), self.parent[lhs]
            else:
                pattern = max(pattern, self.dom_pattern[lhs], self.dom_pattern[rhs])
                lhs, rhs = self.parent[lhs], self.parent[rhs]
        return lhs, pattern

    def find(self, index: int) -> int:
        while self.root[index] != index:
            self.root[index] = self.root[self.root[index]]
            index = self.root[index]
        return index

    def _path(self, src: int, sink: int) -> list:
        """The nodes on the paths from ``src`` (excluded) to ``sink`` (included)."""
        seen, stack, order = set(), [c for c, _ in self.outputs[src]], []
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            order.append(node)
            if node != sink:
                stack.extend(c for c, _ in self.outputs[node])
        return order

    def fuse(self, src: int, sink: int, allowed) -> bool:
        """Fuse every group on the paths ``src`` -> ``sink`` into the sink's group when each
        passes ``allowed(kind, is_sink)`` and the result stays within the limits."""
        path = self._path(src, sink)
        if not all(allowed(self.group_kind[self.find(n)], n == sink) for n in path):
            return False
        groups = {self.find(n) for n in [src] + path}
        if limits_violation(self.graph, {m for g in groups for m in self.members[g]}, self.limits):
            return False
        target = self.find(sink)
        for group in groups - {target}:
            self.root[group] = target
            self.members[target] += self.members[group]
            if self.anchor[group]:
                self.anchor[target] = True
                self.group_kind[target] = max(self.group_kind[target], self.group_kind[group])
        return True

    def run(self):
        for phase in range(2):
            for index in range(len(self.kind)):
                # The node's own group's kind, as TVM reads it: a group that took a
                # complex-out-fusable op is complex-out-fusable from then on.
                kind, sink = self.group_kind[index], self.parent[index]
                if kind is Kind.OPAQUE or sink is None or self.find(index) == self.find(sink):
                    continue
                if kind is Kind.OUT_ELEMWISE_FUSABLE:
                    if phase == 0 and self.dom_pattern[index] is Kind.ELEMWISE:
                        self.fuse(index, sink, lambda k, is_sink: k <= Kind.BROADCAST)
                elif kind <= Kind.BROADCAST:
                    if self.dom_pattern[index] <= Kind.INJECTIVE or self.dom_pattern[index] is Kind.COMM_REDUCE:
                        self.fuse(index, sink, lambda k, is_sink: k <= Kind.INJECTIVE or (
                            is_sink and k in (Kind.COMM_REDUCE, Kind.OUT_ELEMWISE_FUSABLE)))
                elif kind is Kind.INJECTIVE and phase == 1:
                    self.fuse(index, sink, lambda k, is_sink: k <= Kind.INJECTIVE)


def plan_tvm(plan: FusionPlan) -> FusionPlan:
    """Fill ``plan`` with the groups of TVM's FuseOps."""
    partitioner = _Partitioner(plan.graph, plan.limits)
    partitioner.run()
    nodes = plan.graph.nodes
    for index in range(len(nodes)):
        group = partitioner.members[index]
        if partitioner.find(index) == index and len(group) > 1:
            members = set(group)
            plan.blocks.append(Block(members, combined_mapping(nodes[m].mapping for m in sorted(members))))
            plan.graph.commit(members)
    return plan
