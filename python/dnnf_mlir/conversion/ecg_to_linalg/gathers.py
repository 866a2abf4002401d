"""Gathers at offsets known at compile time, with a constant table per axis.

``table_gather`` builds one ``linalg.generic`` over an output whose elements read a
source through its 1-d view: at ``sum(index * stride)`` over the *direct* axes plus,
for each *table* axis, an offset read from a constant table at the output's index
along it; an axis with several taps reads several offsets and sums the elements
with the weights of a second table (separably: ``sum_i wh[i] * (sum_j ww[j] * x)``).
Resize reads its taps this way (``resize.py``), ConvTranspose assembles the phases
of its output (``conv_transpose.py``).

The 1-d view and the linear index are for MLIR's vectorizer: it makes a 1-d
``tensor.extract`` whose index grows with the innermost loop a vector load and any
other a ``vector.gather`` (an n-d extract needs its nd-extract option, which the
code generators do not set). The tables are 1-d too, ``[tap * out + o]``: along the
innermost axis a tap's offsets and weights are then one contiguous vector load,
along the others one scalar.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..._mlir import arith, ir
from ...ecg.tensor_spec import TensorSpec, from_mlir, to_mlir
from ...linalg_builders import element_of
from .builders import add, collapse, constant, extract, gather_generic, index, mul, select, shape_of


@dataclass(frozen=True)
class AxisReads:
    """Where a table axis reads: output index ``o`` reads the source at the offsets
    ``offsets[t, o]`` (t < taps), weighted by ``weights[t, o]`` (None: one tap of
    weight 1); where ``inside[o]`` is False the output is the extrapolation value."""

    offsets: np.ndarray
    weights: Optional[np.ndarray] = None
    inside: Optional[np.ndarray] = None

    @property
    def taps(self) -> int:
        return self.offsets.shape[0]


def _table(values: np.ndarray) -> ir.Value:
    """A 1-d constant: ``values`` (taps, out) flattened tap-major."""
    flat = np.ascontiguousarray(values.reshape(-1))
    attr = ir.DenseElementsAttr.get(flat, type=to_mlir(TensorSpec.of(flat)))
    return arith.ConstantOp(attr.type, attr).result


def table_gather(source, out_shape, strides, reads: dict, extrapolation: float = 0.0):
    """The generic described above: ``source`` read at ``strides[d] * i_d`` along the
    direct axes ``d`` (those not in ``reads``) plus the offsets of ``reads``
    ({axis: AxisReads}) along the others."""
    element = element_of(source)
    dtype = from_mlir(source.type).dtype
    tables = {
        axis: (_table(r.offsets.astype(np.int32)), None if r.weights is None else _table(r.weights.astype(dtype)),
               None if r.inside is None else _table(r.inside.astype(np.int8)), r.taps)
        for axis, r in reads.items()
    }
    flat = collapse(source, [list(range(len(shape_of(source))))])
    # Along the innermost axis the reads are gathers: their offsets are summed in i32
    # and extended once, which LLVM turns into gathers with 32-bit indices (twice the
    # lanes of 64-bit ones); elsewhere in index, which the vectorizer follows to see
    # that a read is contiguous.
    narrow = len(out_shape) - 1 in reads
    offset_type = ir.IntegerType.get_signless(32) if narrow else ir.IndexType.get()

    def body(loops):
        base = None  # the offset of the direct axes' indices
        for d, loop in enumerate(loops):
            if d not in reads and out_shape[d] > 1:
                term = arith.index_cast(offset_type, loop) if narrow else loop
                if strides[d] != 1:
                    term = arith.muli(term, constant(offset_type, strides[d]))
                base = term if base is None else arith.addi(base, term)

        def read(axis, t):
            """(offset, weight) of tap ``t`` of ``axis`` at this output element."""
            offsets, weights, _, _ = tables[axis]
            at = arith.addi(index(t * out_shape[axis]), loops[axis]) if t else loops[axis]
            offset = extract(offsets, [at])
            if not narrow:
                offset = arith.index_cast(offset_type, offset)
            return offset, None if weights is None else extract(weights, [at])

        def combine(axes, offset):
            """The taps of ``axes`` summed (weighted) around ``offset``."""
            if not axes:
                return extract(flat, [arith.index_cast(ir.IndexType.get(), offset) if narrow else offset])
            axis, rest = axes[0], axes[1:]
            total = None
            for t in range(tables[axis][3]):
                tap_offset, weight = read(axis, t)
                value = combine(rest, tap_offset if offset is None else arith.addi(offset, tap_offset))
                if weight is not None:
                    value = mul(weight, value)
                total = value if total is None else add(total, value)
            return total

        value = combine(sorted(reads), base)
        for axis in sorted(reads):
            inside = tables[axis][2]
            if inside is not None:
                flag = extract(inside, [loops[axis]])
                value = select(arith.cmpi(arith.CmpIPredicate.ne, flag, constant(flag.type, 0)), value,
                               constant(element, extrapolation))
        return value

    return gather_generic([], [], out_shape, element, body)


__all__ = ["AxisReads", "table_gather"]
