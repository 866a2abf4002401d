"""Fusion oracles: who decides the Table 3 cells marked Y (fuse_depend).

The paper measures latency(block + op) against latency(block) + latency(op) in a
persistent profiling database. An oracle is any object with
``decide(block_ops, op, cell) -> bool``: ``block_ops`` the block's ops (in program
order), ``op`` the candidate, ``cell`` its ``table.Cell``. A profiling oracle keyed by
op kinds, shapes, attributes and target implements the same method.
"""

from typing import Protocol

from ..ecg.properties import MappingType


class Oracle(Protocol):
    def decide(self, block_ops: list, op, cell) -> bool:
        ...


class ConservativeOracle:
    """The deterministic decision without a profile (``profile=false``).

    Accepts the Y cells between Many-to-Many and Reorganize/Shuffle (either order):
    the data-movement op only re-indexes the loads or stores of the Many-to-Many op,
    so fusing recomputes nothing and saves a full read and write of the tensor; what
    it may cost is a strided access, never extra work. Rejects every Y cell with a
    One-to-Many side (Expand, Tile, Gather, Resize next to anything but One-to-One):
    a fused kernel that replicates data either recomputes the producer per copy or
    scatters the consumer's reads, which only a measurement can justify.
    """

    def decide(self, block_ops: list, op, cell) -> bool:
        return MappingType.ONE_TO_MANY not in (cell.first, cell.second)
