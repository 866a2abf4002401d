"""Pooling: ``max_pool`` and ``average_pool`` onto linalg's named pooling ops, global
pooling onto linalg.reduce.

The input is padded explicitly, past its end too where ceil mode makes the last
windows read beyond it: with the lowest value for max, with zeros for average,
whose divisor then counts only the positions the op counts. Window taps that can
only read past the padded input are dropped first (``reachable_kernel``).
"""

from math import prod

import numpy as np

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg import from_mlir
from ...ecg.shapes import reachable_kernel, window_extra_end
from ...linalg_builders import element_of
from .builders import (
    add, constant, elementwise, empty, filled, lowest, map_values, maximum, pad, reduce, reshape, shape_of, tensor_type,
    window_options,
)
from .registry import Unsupported, lowers

_POOLS = {("max", 1): "pooling_ncw_max", ("max", 2): "pooling_nchw_max",
          ("sum", 1): "pooling_ncw_sum", ("sum", 2): "pooling_nchw_sum"}


def _pool(kind, x, attrs, begins, ends, outs, pad_value, init_value):
    linalg = _mlir.linalg
    shape = shape_of(x)
    kernel = reachable_kernel(shape[2:], begins, ends, attrs["kernel_shape"], attrs["dilations"])
    spatial = len(kernel)
    name = _POOLS.get((kind, spatial))
    if name is None:
        raise Unsupported(f"{spatial}-d pooling")
    extra = window_extra_end(shape[2:], begins, ends, kernel, attrs["strides"], attrs["dilations"], outs)
    x = pad(x, [0, 0] + list(begins), [0, 0] + [e + a for e, a in zip(ends, extra)], pad_value)
    element = element_of(x)
    out_shape = list(shape[:2]) + list(outs)
    init = filled(out_shape, element, init_value)
    window = empty(kernel, element)
    options = window_options(attrs)
    return getattr(linalg, name)(x, window, outs=[init], **options), extra


@lowers("max_pool")
def lower_max_pool(op, args):
    """Pad with the lowest value (it never wins), then pooling_*_max."""
    attrs = op.attrs
    (spec,) = op.operand_specs
    begins, ends, outs = type(op).geometry(spec, attrs)
    low = lowest(element_of(args[0]))
    y, _ = _pool("max", args[0], attrs, begins, ends, outs, low, low)
    return [y]


@lowers("average_pool")
def lower_average_pool(op, args):
    """Zero-pad, pooling_*_sum, divide by the count of the window's counted positions."""
    attrs = op.attrs
    (spec,) = op.operand_specs
    begins, ends, outs = type(op).geometry(spec, attrs)
    total, extra = _pool("sum", args[0], attrs, begins, ends, outs, 0.0, 0.0)
    element = element_of(total)
    divisor = np.ones((), dtype=np.float64)
    kernel = reachable_kernel(spec.shape[2:], begins, ends, attrs["kernel_shape"], attrs["dilations"])
    for dim, (size, b, e, a, k, s, d, o) in enumerate(zip(
        spec.shape[2:], begins, ends, extra, kernel, attrs["strides"], attrs["dilations"], outs
    )):
        valid = np.zeros(b + size + e + a)
        if attrs["count_include_pad"]:
            valid[: b + size + e] = 1
        else:
            valid[b : b + size] = 1
        counts = sum(valid[t * d : t * d + s * (o - 1) + 1 : s] for t in range(k))
        shape = [1] * len(outs)
        shape[dim] = o
        divisor = divisor * counts.reshape(shape)
    if np.all(divisor == divisor.flat[0]):
        count = float(divisor.flat[0])
        return [map_values(total, element, lambda v: arith.divf(v, constant(element, count)))]
    dtype = from_mlir(total.type).dtype
    counts = np.ascontiguousarray(divisor.astype(dtype))
    attr = ir.DenseElementsAttr.get(counts, type=tensor_type(counts.shape, element))
    divisor_tensor = arith.ConstantOp(attr.type, attr).result
    return [elementwise([total, divisor_tensor], shape_of(total), element, arith.divf)]


def _global_pool(x, combine, init, finish):
    shape = shape_of(x)
    dims = list(range(2, len(shape)))
    reduced = reduce(x, dims, init, combine)
    if finish is not None:
        reduced = map_values(reduced, element_of(x), finish)
    return reshape(reduced, shape[:2] + (1,) * len(dims))


@lowers("global_average_pool")
def lower_global_average_pool(op, args):
    x = args[0]
    element = element_of(x)
    count = prod(shape_of(x)[2:])
    return [_global_pool(x, add, 0.0, lambda v: arith.divf(v, constant(element, count)))]


@lowers("global_max_pool")
def lower_global_max_pool(op, args):
    return [_global_pool(args[0], maximum, lowest(element_of(args[0])), None)]
