"""Softmax and the normalizations: batch, layer and instance normalization, LRN.

Each scales x by statistics: reduced over axes (softmax, layer and instance
normalization: linalg.reduce, then one generic reading the reduced tensor along the
kept axes), summed over a channel window (LRN: a reduction generic) or given as
operands (batch normalization). Layer and instance normalization compute in a wider
float type (the stash type, or f32 for f16) as the reference does.
"""

from math import prod

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg.shapes import normalize_axis
from ...linalg_builders import affine_map, element_of, generic
from .builders import (
    cast, combine_reduced, constant, elementwise, empty, identity_map, map_values, map_without, pad, reduce,
    shape_of, zeros,
)
from .registry import Unsupported, lowers


@lowers("batch_normalization")
def lower_batch_normalization(op, args):
    """scale*(x-mean)/sqrt(var+eps)+bias with the per-channel parameters read along axis 1."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    epsilon = op.attrs["epsilon"]
    identity = identity_map(rank)
    channel = affine_map(rank, [1])

    def body(x, scale, bias, mean, var, _out):
        factor = arith.divf(scale, _mlir.math.sqrt(arith.addf(var, constant(element, epsilon))))
        return arith.addf(arith.mulf(arith.subf(x, mean), factor), bias)

    return generic(args, [identity] + [channel] * 4 + [identity], [empty(shape, element)], body)


@lowers("lrn")
def lower_lrn(op, args):
    """x / (bias + alpha/size * sum of squares over a channel window)^beta: the window sum is a
    reduction generic over the zero-padded squares."""
    attrs = op.attrs
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    size = attrs["size"]
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    square = map_values(x, element, lambda v: arith.mulf(v, v))
    padded = pad(square, [0, before] + [0] * (rank - 2), [0, after] + [0] * (rank - 2), 0.0)
    # loops: (d0 .. d{rank-1}, window)
    window_dim = rank
    in_exprs = [ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1) + ir.AffineDimExpr.get(window_dim)]
    in_exprs += [ir.AffineDimExpr.get(d) for d in range(2, rank)]
    maps = [
        ir.AffineMap.get(rank + 1, 0, in_exprs),
        affine_map(rank + 1, [window_dim]),
        affine_map(rank + 1, range(rank)),
    ]
    window = empty([size], element)
    sums = generic(
        [padded, window], maps, [zeros(shape, element)], lambda v, _w, acc: arith.addf(acc, v),
        ["parallel"] * rank + ["reduction"],
    )[0]
    alpha, beta, bias = attrs["alpha"], attrs["beta"], attrs["bias"]

    def normalize(v, s):
        scaled = arith.addf(constant(element, bias), arith.mulf(constant(element, alpha / size), s))
        return arith.divf(v, _mlir.math.powf(scaled, constant(element, beta)))

    return [elementwise([x, sums], shape, element, normalize)]


@lowers("softmax", "log_softmax")
def lower_softmax(op, args):
    """shifted = x - max(x); softmax: e**shifted / sum(e**shifted); log_softmax: shifted - log(sum)."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    if not shape:
        raise Unsupported("softmax of a rank-0 tensor")
    axis = normalize_axis(op.attrs["axis"], len(shape))
    # The peak only shifts the row: a NaN reaches every output through x - peak
    # whether the peak is NaN or not, and -0 or +0 shift alike. So maxnum (NaN
    # ignored: defined, unlike an nnan maximum's poison) without signed-zero order.
    shift_only = ir.Attribute.parse("#arith.fastmath<nsz>")
    peak = reduce(x, [axis], float("-inf"), lambda a, b: arith.maxnumf(a, b, fastmath=shift_only))
    shifted = combine_reduced(x, peak, [axis], element, arith.subf)
    exps = map_values(shifted, element, _mlir.math.exp)
    total = reduce(exps, [axis], 0.0, arith.addf)
    if op.mnemonic == "softmax":
        # arcp: every element of a row divides by the same sum; LLVM may then multiply
        # by its reciprocal (a division costs ten multiplications; error under 1 ulp).
        reciprocal = ir.Attribute.parse("#arith.fastmath<arcp>")
        return [combine_reduced(exps, total, [axis], element, lambda e, t: arith.divf(e, t, fastmath=reciprocal))]
    return [combine_reduced(shifted, total, [axis], element, lambda s, t: arith.subf(s, _mlir.math.log(t)))]


def _mean_and_centered(x, axes, element):
    """(centered x, var) over ``axes``: mean = sum/n, var = sum(centered**2)/n."""
    shape = shape_of(x)
    count = prod(shape[a] for a in axes)
    total = reduce(x, axes, 0.0, arith.addf)
    mean = map_values(total, element, lambda v: arith.divf(v, constant(element, count)))
    centered = combine_reduced(x, mean, axes, element, arith.subf)
    squares = map_values(centered, element, lambda v: arith.mulf(v, v))
    var = map_values(
        reduce(squares, axes, 0.0, arith.addf), element, lambda v: arith.divf(v, constant(element, count))
    )
    return centered, var


def _float_type(dtype_name: str):
    return {"f16": ir.F16Type, "f32": ir.F32Type, "f64": ir.F64Type}[dtype_name].get()


@lowers("layer_normalization")
def lower_layer_normalization(op, args):
    """Normalize over the axes from ``axis`` in the stash type (f32, or f64 for stash_type 11),
    convert back, then * scale (+ bias) broadcast from the right."""
    attrs = op.attrs
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    axis = normalize_axis(attrs["axis"], rank)
    axes = list(range(axis, rank))
    compute = _float_type("f64" if attrs["stash_type"] == 11 or element == _float_type("f64") else "f32")
    xc = x if compute == element else map_values(x, compute, lambda v: cast(v, compute))
    centered, var = _mean_and_centered(xc, axes, compute)
    epsilon = attrs["epsilon"]
    # 1/sqrt(var + eps) once per row, then a multiplication per element: a division
    # per element cost a vdivps per vector (Zen 4: 5-10 cycles each, 48 per BERT row);
    # within 1.5 ulp of dividing.
    def inverse_deviation(v):
        return arith.divf(constant(compute, 1.0), _mlir.math.sqrt(arith.addf(v, constant(compute, epsilon))))

    inverse = map_values(var, compute, inverse_deviation)
    normed = combine_reduced(centered, inverse, axes, element, lambda c, r: cast(arith.mulf(c, r), element))
    y = elementwise([normed, args[1]], shape, element, arith.mulf)
    if len(args) == 3:
        y = elementwise([y, args[2]], shape, element, arith.addf)
    return [y]


@lowers("instance_normalization")
def lower_instance_normalization(op, args):
    """Normalize each (n, c) over the spatial dimensions, then * scale + bias per channel."""
    x, scale, bias = args
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    compute = _float_type("f32") if element == _float_type("f16") else element
    xc = x if compute == element else map_values(x, compute, lambda v: cast(v, compute))
    axes = list(range(2, rank))
    centered, var = _mean_and_centered(xc, axes, compute)
    epsilon = op.attrs["epsilon"]
    maps = [identity_map(rank), map_without(rank, axes), affine_map(rank, [1]), affine_map(rank, [1]), identity_map(rank)]

    def body(c, v, s, b, _o):
        y = arith.divf(c, _mlir.math.sqrt(arith.addf(v, constant(compute, epsilon))))
        return cast(arith.addf(arith.mulf(y, cast(s, compute)), cast(b, compute)), element)

    return generic([centered, var, scale, bias], maps, [empty(shape, element)], body)
