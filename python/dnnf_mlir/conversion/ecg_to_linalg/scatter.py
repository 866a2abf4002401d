"""Scatters: the data copied once, then one ``scf.for`` over the update elements.

Each iteration reads one update and its target position, extracts the element there
from the loop-carried tensor, combines the two and inserts the result: O(updates)
work, and bufferization updates the copy in place. The data, indices and updates are
read through their 1-d views, so that the target is one linear index. Targets are
clamped into the data, as gathers clamp their reads: the compiled code never writes
out of bounds, whatever the indices (out-of-range ones from the caller are rejected by
the C glue, see ``compiler.index_checks``).
"""

from math import prod

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg.shapes import normalize_axis
from ...linalg_builders import element_of
from .builders import add, empty, extract, index, maximum, minimum, mul, reshape, select, shape_of
from .registry import lowers

_COMBINE = {"none": lambda old, new: new, "add": add, "mul": mul, "max": maximum, "min": minimum}


def _flat(value):
    return reshape(value, [prod(shape_of(value))])


def _strides(shape) -> list:
    return [prod(shape[d + 1:]) for d in range(len(shape))]


def _wrapped_position(raw, extent: int):
    """An index element as an in-range ``index``: negative ones from the end, then clamped."""
    position = arith.index_cast(ir.IndexType.get(), raw)
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, index(0))
    position = select(negative, arith.addi(position, index(extent)), position)
    return arith.minsi(arith.maxsi(position, index(0)), index(extent - 1))


def _scattered(data, updates, reduction: str, target):
    """``data`` copied, then for each update element e: out[target(e)] combined with updates[e].
    ``target(e, flat_indices)`` is the linear position in the data for update element e."""
    shape = shape_of(data)
    element = element_of(data)
    copy = _mlir.linalg.copy(_flat(data), outs=[empty([prod(shape)], element)])
    flat_updates = _flat(updates)
    combine = _COMBINE[reduction]
    loop = _mlir.scf.ForOp(index(0), index(prod(shape_of(updates))), index(1), [copy])
    with ir.InsertionPoint(loop.body):
        e = loop.induction_variable
        out = loop.inner_iter_args[0]
        position = target(e)
        value = combine(extract(out, [position]), extract(flat_updates, [e]))
        _mlir.scf.YieldOp([_mlir.tensor.insert(value, out, [position])])
    return reshape(loop.results[0], shape)


@lowers("scatter_elements")
def lower_scatter_elements(op, args):
    """Update element e at coordinates c (of the updates' shape) lands at c with c[axis]
    replaced by indices[c]."""
    data, indices, updates = args
    shape, update_shape = shape_of(data), shape_of(updates)
    axis = normalize_axis(op.attrs["axis"], len(shape))
    flat_indices = _flat(indices)
    data_strides, update_strides = _strides(shape), _strides(update_shape)

    def target(e):
        linear = arith.muli(_wrapped_position(extract(flat_indices, [e]), shape[axis]), index(data_strides[axis]))
        for d, extent in enumerate(update_shape):
            if d == axis or extent == 1:
                continue
            coordinate = arith.remui(arith.divui(e, index(update_strides[d])), index(extent))
            linear = arith.addi(linear, arith.muli(coordinate, index(data_strides[d])))
        return linear

    return [_scattered(data, updates, op.attrs["reduction"], target)]


@lowers("scatter_nd")
def lower_scatter_nd(op, args):
    """Update element e belongs to tuple t = e // row (row: the elements a tuple addresses)
    and lands at the tuple's linear position times row, plus e % row."""
    data, indices, updates = args
    shape = shape_of(data)
    depth = shape_of(indices)[-1]
    row = prod(shape[depth:])
    flat_indices = _flat(indices)
    tuple_strides = _strides(shape[:depth])

    def target(e):
        t = arith.divui(e, index(row)) if row != 1 else e
        linear = arith.remui(e, index(row)) if row != 1 else index(0)
        for j in range(depth):
            at = arith.addi(arith.muli(t, index(depth)), index(j))
            position = _wrapped_position(extract(flat_indices, [at]), shape[j])
            linear = arith.addi(linear, arith.muli(position, index(tuple_strides[j] * row)))
        return linear

    return [_scattered(data, updates, op.attrs["reduction"], target)]
