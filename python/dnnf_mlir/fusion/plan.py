"""What a planner decides: the blocks of one function and the record of its decisions."""

from collections import Counter
from dataclasses import dataclass, field

from ..codegen import FusionLimits
from ..ecg.properties import MappingType
from .graph import OpGraph
from .table import Decision


@dataclass
class Block:
    """A fusion block: graph nodes and the block's resulting mapping type."""

    members: set
    mapping: MappingType

    def ordered(self) -> list:
        return sorted(self.members)


@dataclass
class Decisions:
    """Why candidates were or were not fused, counted per evaluation of a (block, op) pair."""

    cells: Counter = field(default_factory=Counter)  # Table 3 class: G / Y / R
    oracle: Counter = field(default_factory=Counter)  # Y cells: accepted / rejected
    constraints: Counter = field(default_factory=Counter)  # legality rejections by constraint name
    horizontal: Counter = field(default_factory=Counter)  # sibling contractions merged: groups / contractions
    attention: Counter = field(default_factory=Counter)  # attention chains made one block: blocks

    def table(self, decision: Decision):
        self.cells[decision.value] += 1

    def to_json(self) -> dict:
        return {
            "table": {d.value: self.cells.get(d.value, 0) for d in Decision},
            "oracle": {k: self.oracle.get(k, 0) for k in ("accepted", "rejected")},
            "constraints": dict(sorted(self.constraints.items())),
            "horizontal": {k: self.horizontal.get(k, 0) for k in ("groups", "contractions")},
            "attention": {"blocks": self.attention.get("blocks", 0)},
        }


@dataclass
class FusionPlan:
    """The blocks one planner chose for one function (blocks of one op are left out),
    each within ``limits``, those of the target's kernels."""

    mode: str
    graph: OpGraph
    limits: FusionLimits
    blocks: list = field(default_factory=list)
    decisions: Decisions = field(default_factory=Decisions)
    seconds: float = 0.0
