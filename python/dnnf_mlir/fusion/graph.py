"""The data-flow graph of one function body, as the planners see it.

Nodes are the body's top-level ops except constants and the terminator (constants
have no predecessors, so they can neither close a cycle nor order anything). Every
value gets an integer id; ``operands[n]`` / ``results[n]`` list the ids a node reads
and writes, so that block inputs and outputs are counted with set operations.

Cycle checks use reachability bit sets (``desc[n]``: the nodes reachable from ``n``
as a Python int), computed once in reverse program order and updated when a block
is committed: contracting a block makes everything that reaches one member reach
what every member reaches. While a block grows it is not contracted; that is
exact for the checks below, since no outside op that the block feeds can reach the
block again (the block would already be on a cycle).
"""

from dataclasses import dataclass

from ..ecg import ECGOp, from_mlir
from ..kernel_functions import stays_in_code
# Ops no planner fuses: structure, not computation; and the scatters and top_k, whose
# lowerings are loops (conversion's scatter.py, top_k.py) rather than generics over the output.
NOT_FUSABLE = frozenset({"constant", "fused", "yield", "scatter_elements", "scatter_nd", "top_k"})


@dataclass
class Node:
    operation: object  # ir.Operation
    mnemonic: str  # "" for a non-ECG op
    mapping: object  # MappingType, None for a non-ECG op
    fusable: bool
    result_bytes: int
    result_shapes: list


def is_small_constant(view) -> bool:
    """A constant cloned into the fused bodies using it (``kernel_functions.stays_in_code``);
    the others are weights and stay outside as block inputs (the weights pass needs them
    in the entry function)."""
    return stays_in_code(view.operation.attributes["value"])


class OpGraph:
    """Nodes, edges, value ids and reachability of one function body."""

    def __init__(self, block):
        self.block = block
        self.nodes: list[Node] = []
        self.operands: list[list[int]] = []
        self.results: list[list[int]] = []
        self.producer: list[int] = []  # value id -> node, -1 for arguments and constants
        self.small: list[bool] = []  # value id -> a constant cloned into bodies
        self.users: list[list[int]] = []  # value id -> consumer nodes
        self.external: list[bool] = []  # value id -> returned by the function
        self.values = []  # value id -> ir.Value
        ids = {}

        def value_id(value, producer=-1, small=False):
            ids[value] = len(self.values)
            self.values.append(value)
            self.producer.append(producer)
            self.small.append(small)
            self.users.append([])
            self.external.append(False)
            return ids[value]

        for argument in block.arguments:
            value_id(argument)
        operations = [op.operation for op in block.operations]
        for operation in operations:
            view = operation.opview
            is_ecg = isinstance(view, ECGOp)
            if is_ecg and view.mnemonic == "constant":
                value_id(operation.results[0], small=is_small_constant(view))
                continue
            if operation == operations[-1]:  # the terminator
                for value in operation.operands:
                    self.external[ids[value]] = True
                continue
            index = len(self.nodes)
            specs = [from_mlir(r.type) for r in operation.results] if is_ecg else []
            self.nodes.append(Node(
                operation, view.mnemonic if is_ecg else "", view.mapping_type if is_ecg else None,
                is_ecg and view.mnemonic not in NOT_FUSABLE and not len(operation.regions),
                sum(s.nbytes for s in specs), [tuple(s.shape) for s in specs],
            ))
            operand_ids = [ids[v] for v in operation.operands]
            self.operands.append(operand_ids)
            for vid in operand_ids:
                self.users[vid].append(index)
            self.results.append([value_id(r, index) for r in operation.results])
        self.preds = [sorted({self.producer[v] for v in ops if self.producer[v] >= 0}) for ops in self.operands]
        self.succs = [sorted({u for v in res for u in self.users[v]}) for res in self.results]
        self.desc = [0] * len(self.nodes)
        for index in reversed(range(len(self.nodes))):
            reach = 0
            for succ in self.succs[index]:
                reach |= (1 << succ) | self.desc[succ]
            self.desc[index] = reach

    def __len__(self) -> int:
        return len(self.nodes)

    def creates_cycle(self, members: set, candidate: int) -> bool:
        """True when adding ``candidate`` to the block ``members`` closes a cycle through an
        op outside: block -> outside -> candidate, or candidate -> outside -> block."""
        after, before = 0, 0
        for member in members:
            for succ in self.succs[member]:
                if succ != candidate and succ not in members:
                    after |= self.desc[succ]
            for pred in self.preds[member]:
                if pred != candidate and pred not in members:
                    before |= 1 << pred
        return bool((after >> candidate) & 1) or bool(self.desc[candidate] & before)

    def closes_cycle(self, members: set) -> bool:
        """True when joining ``members`` (committed blocks, or ops) into one block closes
        a cycle: a path leaves them and comes back."""
        mask = sum(1 << m for m in members)
        return any(self.desc[succ] & mask
                   for member in members for succ in self.succs[member] if succ not in members)

    def commit(self, members: set):
        """Contract ``members`` into one node for every later reachability query."""
        mask = 0
        for member in members:
            mask |= 1 << member
        reach = mask
        for member in members:
            reach |= self.desc[member]
        for index, desc in enumerate(self.desc):
            if desc & mask:
                self.desc[index] = desc | reach
        for member in members:
            self.desc[member] = reach

    def shape(self, vid: int) -> tuple:
        return tuple(from_mlir(self.values[vid].type).shape)

    def inputs(self, members) -> list:
        """Value ids a block reads from outside, in first-use order (small constants excluded:
        they are cloned into the body)."""
        seen = {}
        for member in sorted(members):
            for vid in self.operands[member]:
                if self.producer[vid] not in members and not self.small[vid]:
                    seen.setdefault(vid, None)
        return list(seen)

    def outputs(self, members) -> list:
        """Value ids of a block that are used outside it, in definition order."""
        return [
            vid for member in sorted(members) for vid in self.results[member]
            if self.external[vid] or any(user not in members for user in self.users[vid])
        ]
