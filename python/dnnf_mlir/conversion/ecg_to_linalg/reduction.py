"""Reductions: the ``reduce_*`` ops onto linalg.reduce, ``arg_max``/``arg_min`` onto a
two-output reduction generic.

A reduction is a table entry (``REDUCTIONS``): an element map before, the identity,
the combining function and a finishing map; keepdims is a reshape afterwards.
"""

from math import prod

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg.shapes import normalize_axis
from ...linalg_builders import element_of, generic
from .builders import (
    add, combine_reduced, compare, constant, elementwise, filled, highest, identity_map, is_float, lowest, map_values,
    map_without, maximum, minimum, mul, reduce, reshape, select, shape_of, zeros,
)
from .registry import lowers


def _square(v):
    return mul(v, v)


# mnemonic -> (element map before, identity, combine, finish(accumulator, count) or None)
REDUCTIONS = {
    "reduce_sum": (None, 0, add, None),
    "reduce_mean": (None, 0, add, lambda v, n: arith.divf(v, constant(v.type, n))),
    "reduce_max": (None, "lowest", maximum, None),
    "reduce_min": (None, "highest", minimum, None),
    "reduce_prod": (None, 1, mul, None),
    "reduce_l1": (lambda v: _mlir.math.absf(v) if is_float(v.type) else _mlir.math.absi(v), 0, add, None),
    "reduce_l2": (_square, 0, add, lambda v, n: _mlir.math.sqrt(v)),
    "reduce_sum_square": (_square, 0, add, None),
    "reduce_log_sum": (None, 0, add, lambda v, n: _mlir.math.log(v)),
}


def _identity_value(element, init):
    if init == "lowest":
        return lowest(element)
    if init == "highest":
        return highest(element)
    return init


@lowers(*REDUCTIONS)
def lower_reduce(op, args):
    """linalg.reduce over the axes (after the element map), finish, then reshape for keepdims."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    (spec,) = op.result_specs
    before, init, combine, finish = REDUCTIONS[op.mnemonic]
    axes = type(op).reduced_axes(len(shape), op.attrs)
    count = prod(shape[a] for a in axes)
    if before is not None:
        x = map_values(x, element, before)
    if axes:
        x = reduce(x, axes, _identity_value(element, init), lambda v, acc: combine(acc, v))
    if finish is not None:
        x = map_values(x, element, lambda v: finish(v, count))
    return [reshape(x, spec.shape)]


@lowers("reduce_log_sum_exp")
def lower_reduce_log_sum_exp(op, args):
    """log(sum(e**(x - peak))) + peak with peak = max (0 where not finite), as the reference."""
    math = _mlir.math
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    (spec,) = op.result_specs
    axes = type(op).reduced_axes(len(shape), op.attrs)

    def finite_or_zero(p):
        finite = arith.cmpf(arith.CmpFPredicate.ONE, math.absf(p), constant(element, float("inf")))
        return select(finite, p, constant(element, 0.0))

    if not axes:
        def whole(v):
            p = finite_or_zero(v)
            return arith.addf(math.log(math.exp(arith.subf(v, p))), p)

        return [reshape(map_values(x, element, whole), spec.shape)]
    peak = map_values(reduce(x, axes, float("-inf"), maximum), element, finite_or_zero)
    exps = combine_reduced(x, peak, axes, element, lambda v, p: math.exp(arith.subf(v, p)))
    total = reduce(exps, axes, 0.0, arith.addf)
    y = elementwise([total, peak], shape_of(total), element, lambda t, p: arith.addf(math.log(t), p))
    return [reshape(y, spec.shape)]


@lowers("arg_max", "arg_min")
def lower_arg_reduce(op, args):
    """A two-output reduction generic carrying (best value, its index); strict comparison keeps
    the first index, non-strict (select_last_index) the last."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    attrs = op.attrs
    (spec,) = op.result_specs
    axis = normalize_axis(attrs["axis"], rank)
    reduced = [d for i, d in enumerate(shape) if i != axis]
    i64 = ir.IntegerType.get_signless(64)
    is_max = op.mnemonic == "arg_max"
    start = _identity_value(element, "lowest" if is_max else "highest")
    best = filled(reduced, element, start)
    where = zeros(reduced, i64)
    strict = "gt" if is_max else "lt"
    loose = "ge" if is_max else "le"
    predicate = loose if attrs["select_last_index"] else strict

    def body(v, acc, acc_index):
        position = arith.index_cast(i64, _mlir.linalg.IndexOp(axis).result)
        better = compare(predicate, v, acc)
        # the first element always replaces the initial value
        first = arith.cmpi(arith.CmpIPredicate.eq, position, constant(i64, 0))
        take = arith.ori(better, first)
        return [select(take, v, acc), select(take, position, acc_index)]

    maps = [identity_map(rank), map_without(rank, [axis]), map_without(rank, [axis])]
    iterators = ["reduction" if d == axis else "parallel" for d in range(rank)]
    _, indices = generic([x], maps, [best, where], body, iterators)
    return [reshape(indices, spec.shape)]
