"""DNNFusion's Table 3 (DESIGN.md section 5): what fusing two ops of given mapping types gives.

Rows are the producer's (first) type, columns the consumer's (second). Each cell is
a class -- fuse_through (G: legal and profitable), fuse_depend (Y: legal, profile to
decide), fuse_break (R: do not fuse) -- and, unless R, the mapping type of the fused
block. The planners classify a block against a candidate op with the block's type
on the side the candidate is not on.
"""

import enum
from dataclasses import dataclass

from ..ecg.properties import MappingType


class Decision(enum.Enum):
    FUSE_THROUGH = "G"
    FUSE_DEPEND = "Y"
    FUSE_BREAK = "R"


@dataclass(frozen=True)
class Cell:
    first: MappingType
    second: MappingType
    decision: Decision
    mapping: MappingType | None  # the fused block's type; None for R

    @property
    def name(self) -> str:
        return f"{self.first.value}/{self.second.value}"


_O, _M, _X, _R, _S = (MappingType.ONE_TO_ONE, MappingType.ONE_TO_MANY, MappingType.MANY_TO_MANY,
                      MappingType.REORGANIZE, MappingType.SHUFFLE)
_G, _Y = Decision.FUSE_THROUGH, Decision.FUSE_DEPEND
_COLUMNS = (_O, _M, _X, _R, _S)
# Row per producer type; one (mapping, decision) per consumer column, None for R.
_ROWS = {
    _O: ((_O, _G), (_M, _G), (_X, _G), (_R, _G), (_S, _G)),
    _M: ((_M, _G), (_M, _Y), None, (_M, _Y), (_M, _Y)),
    _X: ((_X, _G), (_X, _Y), None, (_X, _Y), (_X, _Y)),
    _R: ((_R, _G), (_M, _Y), (_X, _Y), (_R, _G), (_R, _G)),
    _S: ((_S, _G), (_M, _Y), (_X, _Y), (_R, _G), (_S, _G)),
}

TABLE: dict[tuple, Cell] = {
    (first, second): Cell(first, second, Decision.FUSE_BREAK, None) if entry is None
    else Cell(first, second, entry[1], entry[0])
    for first, row in _ROWS.items()
    for second, entry in zip(_COLUMNS, row)
}


def classify(first: MappingType, second: MappingType) -> Cell:
    """The cell for a producer of type ``first`` feeding a consumer of type ``second``."""
    return TABLE[first, second]


def combined_mapping(types) -> MappingType:
    """The mapping type of a block whose ops have ``types`` in topological order: the
    table's cells folded left to right (the most complex type where a cell is R, which
    only blocks formed by other rules than the table's, TVM's, can contain)."""
    types = list(types)
    mapping = types[0]
    for other in types[1:]:
        cell = classify(mapping, other)
        mapping = cell.mapping or MappingType.most_complex(mapping, other)
    return mapping
