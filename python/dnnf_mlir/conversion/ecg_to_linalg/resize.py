"""Resize: a gather over the input whose taps are compile-time constants.

``ResizeOp.taps`` gives each resized axis' taps (``ecg/ops/resize_taps.py``): per
output index, the input indices it reads and their weights. They become constant
tables, and a ``linalg.generic`` over the output reads every combination of its
axes' taps with ``tensor.extract`` and sums them separably,
``sum_i wh[i] * (sum_j ww[j] * x[.., ih[i], iw[j]])``, the index and weight of a tap
read from the tables at the output's index. Separable axes are combined in one
generic, or resized one group after another where that reads less (``_plan``).

The input is read through a 1-d view at a linear index, and each index table holds
``index * stride``: MLIR's vectorizer makes a 1-d ``tensor.extract`` whose index
grows with the innermost loop a vector load and any other a ``vector.gather`` (an
n-d extract needs its nd-extract option, which the code generators do not set). The
tables are 1-d too, ``[tap * out + o]``: along the innermost axis a tap's indices
and weights are then one contiguous vector load, along the others one scalar.
"""

from math import prod

import numpy as np

from ..._mlir import arith, ir
from ...ecg.tensor_spec import TensorSpec, from_mlir, to_mlir
from ...linalg_builders import element_of
from .builders import add, collapse, constant, empty, extract, gather_generic, index, mul, select, shape_of
from .registry import lowers

MAX_COMBINED_TAPS = 16  # taps one generic combines at most (bicubic: 4 x 4): its body's size
# Relative costs behind the plan (measured on AVX-512: a 16-lane gather against 16
# contiguous lanes; an element written to memory and read back).
GATHER_COST = 2
WRITE_COST = 2.0


def _table(values: np.ndarray) -> ir.Value:
    """A 1-d constant: ``values`` (taps, out) flattened tap-major."""
    flat = np.ascontiguousarray(values.reshape(-1))
    attr = ir.DenseElementsAttr.get(flat, type=to_mlir(TensorSpec.of(flat)))
    return arith.ConstantOp(attr.type, attr).result


def _chunks(axes: list, taps: dict) -> list:
    """``axes`` in order, cut into groups whose taps multiply to at most MAX_COMBINED_TAPS."""
    groups = []
    for axis in axes:
        if groups and prod(taps[a].count for a in groups[-1]) * taps[axis].count <= MAX_COMBINED_TAPS:
            groups[-1].append(axis)
        else:
            groups.append([axis])
    return groups


def _plan(taps: dict, in_shape, out_shape) -> list:
    """The resized axes as a sequence of groups, each one generic.

    Reads along the innermost axis are gathers, the costly ones. Nearest reads one
    element per output: all axes in one generic. Interpolation reads every
    combination of taps: the innermost axis is then interpolated alone, on the side
    where the other axes are smaller (first when they grow, last when they shrink),
    and the others in one generic of contiguous reads. Measured on AVX-512 at 2x:
    bilinear up-sampling 1.7x faster than in one generic, nearest 1.2x slower.
    """
    innermost = len(in_shape) - 1
    outer = _chunks([axis for axis in sorted(taps) if axis != innermost], taps)
    if innermost not in taps or taps[innermost].count == 1 or not outer:
        return _chunks(sorted(taps), taps)
    grows = prod(in_shape[a] for group in outer for a in group) <= prod(out_shape[a] for group in outer for a in group)
    return [[innermost]] + outer if grows else outer + [[innermost]]


def _resize_axes(x, taps: dict, out_shape, extrapolation: float):
    """One generic resizing ``x`` along the axes of ``taps`` (the others kept) to ``out_shape``."""
    in_shape = shape_of(x)
    element = element_of(x)
    strides = [prod(in_shape[d + 1:]) for d in range(len(in_shape))]
    dtype = from_mlir(x.type).dtype
    tables = {}
    for axis, t in taps.items():
        offsets = _table((t.indices * strides[axis]).T.astype(np.int32))
        weights = None if t.weights is None else _table(t.weights.T.astype(dtype))
        inside = None if t.inside is None else _table(t.inside.astype(np.int8))
        tables[axis] = (offsets, weights, inside, t.count)
    flat = collapse(x, [list(range(len(in_shape)))])

    # Along the innermost axis the reads are gathers: their offsets are summed in i32
    # and extended once, which LLVM turns into gathers with 32-bit indices (twice the
    # lanes of 64-bit ones); elsewhere in index, which the vectorizer follows to see
    # that a read is contiguous.
    narrow = len(in_shape) - 1 in taps
    offset_type = ir.IntegerType.get_signless(32) if narrow else ir.IndexType.get()

    def body(loops):
        base = None  # the offset of the kept axes' indices
        for d, loop in enumerate(loops):
            if d not in taps and in_shape[d] > 1:
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

        value = combine(sorted(taps), base)
        for axis in sorted(taps):
            inside = tables[axis][2]
            if inside is not None:
                flag = extract(inside, [loops[axis]])
                value = select(arith.cmpi(arith.CmpIPredicate.ne, flag, constant(flag.type, 0)), value,
                               constant(element, extrapolation))
        return value

    return gather_generic([], [], out_shape, element, body)


@lowers("resize")
def lower_resize(op, args):
    """The resized axes in the groups ``_plan`` chooses, each group one gather generic."""
    x = args[0]
    (spec,) = op.result_specs
    element = element_of(x)
    if 0 in spec.shape:
        return [empty(spec.shape, element)]
    taps = type(op).taps(shape_of(x), op.attrs)
    shape = list(shape_of(x))
    for group in _plan(taps, shape_of(x), spec.shape):
        for axis in group:
            shape[axis] = spec.shape[axis]
        x = _resize_axes(x, {axis: taps[axis] for axis in group}, list(shape), op.attrs["extrapolation_value"])
    return [x]


__all__ = ["MAX_COMBINED_TAPS", "lower_resize"]
