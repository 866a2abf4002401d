"""Which inputs of a compiled model are indices, to be checked when it runs.

ONNX makes an index out of range an error (onnxruntime returns INVALID_ARGUMENT).
Constant indices are checked at import (the gather ops' verifiers); indices that a
Gather reads from a graph input -- BERT's ``input_ids`` into its embedding table --
can only be checked at run time. ``index_checks`` finds, in the imported entry
function, every gather whose indices are an entry argument passed through ops that
keep the values (reshapes, transposes, slices, widening integer casts); the C glue
checks each element of such an input before the generated code runs and returns
``DNNF_INVALID_ARGUMENT`` with the input, the element, the node and the range
(``c_glue``). Indices computed inside the graph are clamped into range by the
generated code (``conversion.ecg_to_linalg.data_movement``), so that it never reads
out of bounds; an out-of-range one there reads the nearest row, unreported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .._mlir import ir
from ..ecg import from_mlir
from ..ecg.shapes import normalize_axis

GATHERS = {"ecg.gather": "Gather", "ecg.gather_elements": "GatherElements"}
# Ops whose result holds only values of their first operand.
VALUE_KEEPING = {f"ecg.{name}" for name in ("reshape", "flatten", "squeeze", "unsqueeze", "transpose", "expand",
                                             "slice", "tile", "cast")}
_NAME = re.compile(r'loc\("([^"]*)"')


@dataclass(frozen=True)
class IndexCheck:
    """Every element of entry argument ``input`` must be in [-size, size): the
    indices of ``op`` node ``node``."""

    input: int
    size: int
    node: str
    op: str

    def to_json(self) -> dict:
        return {"input": self.input, "size": self.size, "node": self.node, "op": self.op}


def _keeps_values(op) -> bool:
    if op.name not in VALUE_KEEPING:
        return False
    if op.name != "ecg.cast":
        return True
    source, result = from_mlir(op.operands[0].type).dtype, from_mlir(op.results[0].type).dtype
    return source.kind in "iu" and result.kind in "iu" and np.can_cast(source, result, "safe")


def _argument(value: ir.Value) -> int | None:
    """The entry argument ``value`` holds the values of, or None."""
    while not isinstance(value.owner, ir.Block):
        op = value.owner.operation
        if not _keeps_values(op):
            return None
        value = op.operands[0]
    return ir.BlockArgument(value).arg_number


def index_checks(function) -> list:
    """The ``IndexCheck``s of the entry ``function`` as imported (before fusion)."""
    checks = set()
    for op in function.regions[0].blocks[0].operations:
        op = op.operation
        if op.name not in GATHERS:
            continue
        argument = _argument(op.operands[1])
        if argument is None:
            continue
        data = from_mlir(op.operands[0].type)
        size = data.shape[normalize_axis(ir.IntegerAttr(op.attributes["axis"]).value, data.rank)]
        name = _NAME.match(str(op.location))
        checks.add(IndexCheck(argument, size, name.group(1) if name else str(op.location), GATHERS[op.name]))
    return sorted(checks, key=lambda c: (c.input, c.size, c.node))


__all__ = ["IndexCheck", "index_checks"]
