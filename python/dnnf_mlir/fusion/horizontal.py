"""Horizontal fusion: sibling contractions that read one tensor become one contraction.

DESIGN.md section 8 (seed 003's classic fusions): the query, key and value
projections of one hidden state, the 1x1 convolutions that open an Inception
module, a ResNet stage's projection shortcut beside its first convolution. Each is
a contraction of the same input with weights of its own; concatenating the weights
gives one wider contraction that reads the input once, and slices of its result
are the branches' values. Table 3 has no cell for siblings (it classifies producer
-> consumer pairs), so this runs after Listing 1, on the blocks it formed.

A unit (a block, or a contraction fused into nothing) qualifies when it holds one
contraction, whose weights (and bias) are constants. Units with the same data
operand and compatible contractions become one block when, together, they read
nothing computed but that operand (a SwiGLU's gate block may read the up
projection beside it): so joining them cannot close a cycle, and no value is
written out that was not before. Element-wise ops that every branch applies in the
same way right after its contraction (each Inception branch's bias and ReLU) are
applied once to the wide result instead, which keeps them in its epilogue.
"""

from collections import defaultdict
from dataclasses import replace

import numpy as np

from .._mlir import ir
from ..ecg import OPS
from ..ecg.properties import MappingType
from ..rewriting.matching import constant_array, is_constant, op_key
from .constraints import live_values
from .graph import OpGraph
from .plan import Block, FusionPlan

# The contractions merged, and the axis of their weights (operand 1) that is
# concatenated: a MatMul's [K, N] weights along N, a Conv's [F, C, kh, kw] filters
# along F. Their results are joined along the last axis and the channel axis.
_WEIGHT_AXIS = {"mat_mul": 1, "conv": 0}


def _result_axis(mnemonic: str, rank: int) -> int:
    return rank - 1 if mnemonic == "mat_mul" else 1


def sibling_key(graph: OpGraph, members: set):
    """What a unit's contraction must share with its siblings to merge with them
    (its kind, its data operand, its weights' shape except along the merged axis,
    their element type, its attributes), or None when it has none to share."""
    heads = [m for m in members if graph.nodes[m].mnemonic in _WEIGHT_AXIS]
    if len(heads) != 1:
        return None
    view = graph.nodes[heads[0]].operation.opview
    data, weights, *bias = view.operation.operands
    if not is_constant(weights) or not all(is_constant(b) for b in bias):
        return None
    shape = list(weights.type.shape)
    if view.mnemonic == "mat_mul":
        if len(shape) != 2 or len(data.type.shape) < 2:
            return None
        attrs = ()
    else:
        if view.attrs["group"] != 1:
            return None
        attrs = tuple(sorted((name, str(value)) for name, value in view.attrs.items()))
    del shape[_WEIGHT_AXIS[view.mnemonic]]
    return view.mnemonic, graph.operands[heads[0]][0], tuple(shape), str(weights.type.element_type), attrs


def lays_out_matmul_result(graph: OpGraph, members: set) -> bool:
    """Whether the unit ``members`` is a matmul with a reshape or transpose of its own
    (BERT's Q/K/V projections, each to its heads' layout)."""
    mappings = {graph.nodes[m].mapping for m in members}
    return ("mat_mul" in {graph.nodes[m].mnemonic for m in members}
            and bool(mappings & {MappingType.REORGANIZE, MappingType.SHUFFLE}))


def self_contained(graph: OpGraph, units: list, data: int) -> list:
    """The largest subset of ``units`` each of which reads nothing computed but ``data``
    and the outputs of the others (a SwiGLU's gate block reads the up projection): the
    subset together reads only ``data``, so merging it cannot close a cycle."""
    while True:
        produced = {vid: index for index, members in enumerate(units) for vid in graph.outputs(members)}
        kept = [members for index, members in enumerate(units)
                if all(vid == data or is_constant(graph.values[vid]) or produced.get(vid, index) != index
                       for vid in graph.inputs(members))]
        if len(kept) == len(units):
            return units
        units = kept


def _within_limits(graph: OpGraph, units: list, limits) -> list:
    """``units`` (in program order) in consecutive groups whose union stays within the
    ``limits`` on outputs and live values (each branch's slice adds one)."""
    groups, current = [], []
    for members in units:
        union = set().union(members, *current)
        if current and (len(graph.outputs(union)) > limits.max_outputs
                        or live_values(graph, union) + len(current) + 1 > limits.max_live_values):
            groups.append(current)
            current = []
        current.append(members)
    groups.append(current)
    return groups


class _Rewriter:
    """Rewrites one function body, group by group, keeping track of the ops it makes
    and erases (by address: an erased op's Python object must not be touched)."""

    def __init__(self, block):
        self.block = block
        self.constants = {}  # keys of the source constants -> the concatenated constant
        self.sources = []  # source constants, erased at the end if nothing uses them
        self.created, self.erased = set(), set()

    def _build(self, mnemonic: str, operands: list, attrs: dict, where, location):
        op = OPS[mnemonic].build(operands, attrs, loc=location, ip=ir.InsertionPoint(where)).operation
        self.created.add(op_key(op))
        self.erased.discard(op_key(op))  # the address of an op erased before
        return op

    def _erase(self, op):
        self.erased.add(op_key(op))
        self.created.discard(op_key(op))
        op.erase()

    def concatenated(self, parts: list, axis: int):
        """One constant joining ``parts`` along ``axis``, made once per list of sources.
        A part is a constant value, or an array (zeros standing for a missing bias)."""
        key = (axis, tuple(op_key(p.owner.operation) if isinstance(p, ir.Value) else p.shape for p in parts))
        if key not in self.constants:
            values = [p for p in parts if isinstance(p, ir.Value)]
            self.sources += [v.owner.operation for v in values]
            arrays = [constant_array(p) if isinstance(p, ir.Value) else p for p in parts]
            joined = arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis)
            op = OPS["constant"].build([], {"value": np.ascontiguousarray(joined)}, loc=values[0].owner.location,
                                       ip=ir.InsertionPoint.at_block_begin(self.block)).operation
            self.constants[key] = op.results[0]
        return self.constants[key]

    def merge(self, heads: list) -> list:
        """Replace the contractions ``heads`` (in program order) by one and a slice of its
        result per head; returns the slices."""
        first = heads[0]
        mnemonic = first.opview.mnemonic
        axis = _WEIGHT_AXIS[mnemonic]
        weights = self.concatenated([h.operands[1] for h in heads], axis)
        operands = [first.operands[0], weights]
        if any(len(h.operands) > 2 for h in heads):  # a Conv bias; zeros where a head has none
            dtype = constant_array(next(h.operands[2] for h in heads if len(h.operands) > 2)).dtype
            operands.append(self.concatenated([
                h.operands[2] if len(h.operands) > 2 else np.zeros(h.operands[1].type.shape[0], dtype)
                for h in heads], 0))
        location = ir.Location.fused([h.location for h in heads])
        merged = self._build(mnemonic, operands, first.opview.attrs, first, location).results[0]
        slices = self._slices(merged, [h.results[0] for h in heads], _result_axis(mnemonic, merged.type.rank),
                              first, location)
        for head, piece in zip(heads, slices):
            head.results[0].replace_all_uses_with(piece)
            self._erase(head)
        return slices

    def _slices(self, whole, parts: list, axis: int, where, location) -> list:
        """Slices of ``whole`` along ``axis``, one as wide as each of ``parts``, in order."""
        slices, start = [], 0
        for part in parts:
            end = start + part.type.shape[axis]
            attrs = {"starts": [start], "ends": [end], "axes": [axis], "steps": [1]}
            slices.append(self._build("slice", [whole], attrs, where, location).results[0])
            start = end
        return slices

    def sink(self, slices: list, units: list) -> list | None:
        """Apply once, before slicing, the element-wise op that every slice feeds alone
        (the same op with the same attributes, the slice at the same operand, constants
        for the other operands) in its own unit; returns the new slices, or None when
        the branches do not all apply one."""
        users = []
        for piece, keys in zip(slices, units):
            uses = list(piece.uses)
            if len(uses) != 1:
                return None
            user = uses[0].owner.operation
            if op_key(user) not in keys:
                return None
            users.append((user, uses[0].operand_number))
        first, position = users[0]
        view = first.opview
        if (view.mapping_type is not MappingType.ONE_TO_ONE or len(first.results) != 1
                or any(u.name != first.name or p != position or u.opview.attrs != view.attrs for u, p in users)
                or any(u.results[0].type.shape != s.type.shape for (u, _), s in zip(users, slices))):
            return None
        whole = slices[0].owner.operands[0]
        axis = slices[0].owner.opview.attrs["axes"][0]
        rank = whole.type.rank
        operands = []
        for index in range(len(first.operands)):
            if index == position:
                operands.append(whole)
                continue
            values = [u.operands[index] for u, _ in users]
            if not all(is_constant(v) for v in values):
                return None
            raw = [constant_array(v) for v in values]
            arrays = [a.reshape((1,) * (rank - a.ndim) + a.shape) for a in raw]
            widths = [s.type.shape[axis] for s in slices]
            if all(a.shape[axis] == 1 for a in arrays) and all(np.array_equal(a, arrays[0]) for a in arrays):
                operands.append(self.concatenated([values[0]], 0))  # a copy defined before the slices
            elif (min(a.ndim for a in raw) >= rank - axis and [a.shape[axis] for a in arrays] == widths
                  and len({a.shape[:axis] + a.shape[axis + 1:] for a in arrays}) == 1):
                operands.append(self.concatenated(values, axis - rank))
            else:
                return None
        where = slices[0].owner.operation
        location = ir.Location.fused([u.location for u, _ in users])
        applied = self._build(view.mnemonic, operands, view.attrs, where, location).results[0]
        new_slices = self._slices(applied, slices, axis, where, location)
        for (user, _), piece in zip(users, new_slices):
            user.results[0].replace_all_uses_with(piece)
            self._erase(user)
        for piece in slices:
            self._erase(piece.owner.operation)
        return new_slices

    def erase_unused_sources(self):
        for op in {op_key(op): op for op in self.sources}.values():
            if all(not list(r.uses) for r in op.results):
                op.erase()


def combine_siblings(plan: FusionPlan, laid_out_projections: bool = True) -> FusionPlan:
    """``plan`` after horizontal fusion (its function body rewritten), or ``plan`` itself
    when no siblings qualify. A merged block is Many-to-Many, its contraction's type.
    ``laid_out_projections=False`` leaves out the matmuls that lay out their own result
    (``lays_out_matmul_result``: the target computes them apart either way)."""
    graph = plan.graph
    in_blocks = set().union(*(block.members for block in plan.blocks))
    units = [block.members for block in plan.blocks] + [
        {n} for n, node in enumerate(graph.nodes) if n not in in_blocks and node.mnemonic in _WEIGHT_AXIS
    ]
    by_key = defaultdict(list)
    for members in units:
        if not laid_out_projections and lays_out_matmul_result(graph, members):
            continue
        key = sibling_key(graph, members)
        if key is not None:
            by_key[key].append(members)
    groups = [
        group
        for (_, data, *_), siblings in by_key.items()
        for chunk in _within_limits(graph, self_contained(graph, sorted(siblings, key=min), data), plan.limits)
        if len(group := self_contained(graph, chunk, data)) > 1
    ]
    if not groups:
        return plan
    grouped = {id(members) for group in groups for members in group}

    def keys_of(members) -> set:
        return {op_key(graph.nodes[m].operation) for m in members}

    blocks = [(keys_of(block.members), block.mapping) for block in plan.blocks if id(block.members) not in grouped]
    rewriter = _Rewriter(graph.block)
    function = graph.block.owner.operation
    with function.context, function.location:  # types need a location; each op gets its own
        for group in groups:
            heads = [graph.nodes[m].operation for members in group for m in sorted(members)
                     if graph.nodes[m].mnemonic in _WEIGHT_AXIS]
            unit_keys = [keys_of(members) for members in group]
            rewriter.created = set()
            slices = rewriter.merge(heads)
            while slices is not None:
                slices = rewriter.sink(slices, unit_keys)
            # Addresses of erased ops may be reused by later groups' ops: settle this one now.
            blocks.append(((set().union(*unit_keys) - rewriter.erased) | rewriter.created, MappingType.MANY_TO_MANY))
            plan.decisions.horizontal["groups"] += 1
            plan.decisions.horizontal["contractions"] += len(heads)
        rewriter.erase_unused_sources()
    new_graph = OpGraph(graph.block)
    index = {op_key(node.operation): n for n, node in enumerate(new_graph.nodes)}
    new_blocks = [Block({index[k] for k in keys}, mapping) for keys, mapping in blocks]
    for block in new_blocks:  # as the planners leave their graph: every block contracted
        new_graph.commit(block.members)
    return replace(plan, graph=new_graph, blocks=new_blocks)
