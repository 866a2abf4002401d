"""The fusion plan as plain data: what its picture draws, kept apart from the IR.

``plan_graph(module)`` walks a fused ECG module (after ``ecg-fuse``) into a
``PlanGraph``: nodes (inputs, ops, outputs), one box per kernel, and the edges
between nodes with their bytes. Box ``i`` is launch ``i`` of the compiled model:
``ecg-outline-kernels`` makes each top-level ECG op of a public function (an
``ecg.fused`` or an unfused op, constants aside) one kernel call in program order, and
``dnnf-instrument-kernels`` numbers the calls in that order. A profiled build keeps
the graph as JSON (``FUSION_PLAN`` in the artifact), so that ``dnnf-run --profile-svg``
can draw the measured times on the plan without the IR. Constants are left out
(weights would hide the graph).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .._mlir import ir
from ..ecg import from_mlir

FUSION_PLAN = "fusion_plan.json"  # in a profiled artifact's directory


@dataclass
class PlanBox:
    """One kernel: its nodes (ops, in body order) and its block's mapping type (None
    for an unfused op)."""

    nodes: list
    mapping: str | None = None


@dataclass
class PlanEdge:
    producer: int
    consumer: int
    nbytes: int
    inside: bool  # never materialised: produced and consumed in one block (IR_removable)


@dataclass
class PlanGraph:
    labels: list = field(default_factory=list)  # per node: "input 0", "conv", "output 0"
    boxes: list = field(default_factory=list)
    edges: list = field(default_factory=list)

    def box_of(self) -> dict:
        """Node -> index of the box holding it (inputs and outputs are in none)."""
        return {node: index for index, box in enumerate(self.boxes) for node in box.nodes}

    def box_ops(self, index: int) -> str:
        """The ops of box ``index`` as the kernel statistics name them: "conv+add+relu"."""
        return "+".join(self.labels[node] for node in self.boxes[index].nodes)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "PlanGraph":
        return cls(list(data["labels"]), [PlanBox(**box) for box in data["boxes"]],
                   [PlanEdge(**edge) for edge in data["edges"]])


def _bytes(value) -> int:
    try:
        return from_mlir(value.type).nbytes
    except Exception:  # noqa: BLE001 - a non-tensor value (none in ECG functions) carries nothing drawn
        return 0


class _Walk:
    """Builds a ``PlanGraph`` over the functions of a module, one after the other."""

    def __init__(self):
        self.graph = PlanGraph()
        self.node_of: dict = {}  # ir.Value -> its producer's node (or its input's)
        self.removed: set = set()  # values that never leave their block

    def node(self, label: str) -> int:
        self.graph.labels.append(label)
        return len(self.graph.labels) - 1

    def edge(self, value, consumer: int):
        producer = self.node_of.get(value)
        if producer is not None:  # else a constant
            self.graph.edges.append(PlanEdge(producer, consumer, _bytes(value), value in self.removed))

    def function(self, function):
        body = function.regions[0].blocks[0]
        for index, argument in enumerate(body.arguments):
            self.node_of[argument] = self.node(f"input {index}")
        for op in body.operations:
            op = op.operation
            if op.name == "ecg.constant":
                continue
            if op.name == "ecg.fused":
                self.fused(op)
            elif op.name == "func.return":
                for index, value in enumerate(op.operands):
                    self.edge(value, self.node(f"output {index}"))
            else:
                node = self.node(op.name.removeprefix("ecg."))
                self.graph.boxes.append(PlanBox([node]))
                for value in op.operands:
                    self.edge(value, node)
                for result in op.results:
                    self.node_of[result] = node

    def fused(self, fused):
        inner = fused.regions[0].blocks[0]
        for argument, operand in zip(inner.arguments, fused.operands):
            if operand in self.node_of:
                self.node_of[argument] = self.node_of[operand]
        ops = [op.operation for op in inner.operations]
        yielded = set(ops[-1].operands)
        box = PlanBox([], ir.StringAttr(fused.attributes["mapping"]).value)
        edges = []
        for op in ops[:-1]:
            if op.name == "ecg.constant":
                continue
            node = self.node(op.name.removeprefix("ecg."))
            box.nodes.append(node)
            edges += [(value, node) for value in op.operands]
            for result in op.results:
                self.node_of[result] = node
                if result not in yielded:
                    self.removed.add(result)
        for result, value in zip(fused.results, ops[-1].operands):
            self.node_of[result] = self.node_of.get(value)
        self.graph.boxes.append(box)
        for value, node in edges:
            self.edge(value, node)


def plan_graph(module) -> PlanGraph:
    """The ``PlanGraph`` of every function of a fused ECG ``module``, in module order."""
    op = module.operation if hasattr(module, "operation") else module
    walk = _Walk()
    for function in op.regions[0].blocks[0].operations:
        if function.operation.name == "func.func":
            walk.function(function.operation)
    return walk.graph


__all__ = ["FUSION_PLAN", "PlanBox", "PlanEdge", "PlanGraph", "plan_graph"]
