"""Resize: a gather over the input whose taps are compile-time constants.

``ResizeOp.taps`` gives each resized axis' taps (``ecg/ops/resize_taps.py``): per
output index, the input indices it reads and their weights. They become the
constant tables of a gather generic over the output (``gathers.table_gather``)
that reads every combination of its axes' taps and sums them separably,
``sum_i wh[i] * (sum_j ww[j] * x[.., ih[i], iw[j]])``. Separable axes are combined
in one generic, or resized one group after another where that reads less (``_plan``).
An interpolated innermost axis resized alone is resized across (``_resize_across``).
"""

from math import prod

from ...linalg_builders import element_of
from .builders import empty, shape_of, transpose
from .gathers import AxisReads, table_gather
from .registry import lowers

MAX_COMBINED_TAPS = 16  # taps one generic combines at most (bicubic: 4 x 4): its body's size
# The fewest elements along the axis before the innermost for ``_resize_across``: its reads
# are vectors along that axis, one AVX2 vector at least.
MIN_ACROSS = 8


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
    strides = [prod(in_shape[d + 1:]) for d in range(len(in_shape))]
    reads = {
        axis: AxisReads((t.indices * strides[axis]).T, None if t.weights is None else t.weights.T, t.inside)
        for axis, t in taps.items()
    }
    return table_gather(x, out_shape, strides, reads, extrapolation)


def _resize_across(x, taps, out_shape, extrapolation: float):
    """The innermost axis resized by ``taps`` with the axis before it made the innermost
    (transposed there and back): an output's taps are then rows, read with vector loads
    along that axis, where along the innermost they are gathers, slow on x86 (Zen 4:
    bicubic 1x32x56x56 to width 112 in 253 us, across 57 us with both transposes)."""
    rank = len(out_shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    resized = _resize_axes(transpose(x, perm), {rank - 2: taps}, [out_shape[p] for p in perm], extrapolation)
    return transpose(resized, perm)


def _across(group: list, taps: dict, shape) -> bool:
    """Whether ``group`` is the innermost axis alone, interpolated, with enough elements
    along the axis before it for ``_resize_across``."""
    innermost = len(shape) - 1
    return group == [innermost] and taps[innermost].count > 1 and innermost > 0 and shape[-2] >= MIN_ACROSS


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
        across = _across(group, taps, shape)
        for axis in group:
            shape[axis] = spec.shape[axis]
        if across:
            x = _resize_across(x, taps[group[0]], list(shape), op.attrs["extrapolation_value"])
        else:
            x = _resize_axes(x, {axis: taps[axis] for axis in group}, list(shape), op.attrs["extrapolation_value"])
    return [x]


__all__ = ["MAX_COMBINED_TAPS", "lower_resize"]
