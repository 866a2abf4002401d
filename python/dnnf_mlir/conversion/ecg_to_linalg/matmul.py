"""Matrix products: ``gemm`` and ``mat_mul`` onto linalg.matmul / linalg.batch_matmul.

Transposed operands become transposed indexing maps of one linalg.matmul, and
numpy's batch broadcasting is materialized and folded into one batch dimension.
"""

from math import prod

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import element_of
from .builders import add, broadcast_to, constant, elementwise, map_values, mul, reshape, shape_of, zeros
from .registry import lowers


def matmul2d(a, b, init=None, transpose_a=False, transpose_b=False):
    """linalg.matmul (with transposed indexing maps for A^T / B^T) accumulating into ``init``."""
    linalg = _mlir.linalg
    m = shape_of(a)[1 if transpose_a else 0]
    n = shape_of(b)[0 if transpose_b else 1]
    init = zeros((m, n), element_of(a)) if init is None else init
    if not transpose_a and not transpose_b:
        return linalg.matmul(a, b, outs=[init])
    d_m, d_n, d_k = (ir.AffineDimExpr.get(i) for i in range(3))
    maps = [
        ir.AffineMap.get(3, 0, [d_k, d_m] if transpose_a else [d_m, d_k]),
        ir.AffineMap.get(3, 0, [d_n, d_k] if transpose_b else [d_k, d_n]),
        ir.AffineMap.get(3, 0, [d_m, d_n]),
    ]
    return linalg.matmul(a, b, outs=[init], indexing_maps=maps)


@lowers("gemm")
def lower_gemm(op, args):
    """alpha * A' @ B' + beta * C: C*beta broadcast is the matmul's accumulator when alpha is 1."""
    attrs = op.attrs
    a, b = args[:2]
    (spec,) = op.result_specs
    element = element_of(a)
    alpha, beta = attrs["alpha"], attrs["beta"]
    c = args[2] if len(args) == 3 and beta != 0.0 else None
    if c is not None and beta != 1.0:
        c = map_values(c, element, lambda v: mul(v, constant(element, beta)))
    if c is not None and alpha == 1.0:
        init = broadcast_to(c, spec.shape)
        return [matmul2d(a, b, init, bool(attrs["transA"]), bool(attrs["transB"]))]
    y = matmul2d(a, b, None, bool(attrs["transA"]), bool(attrs["transB"]))
    if alpha != 1.0:
        y = map_values(y, element, lambda v: mul(v, constant(element, alpha)))
    if c is not None:
        y = elementwise([y, c], spec.shape, element, add)
    return [y]


@lowers("mat_mul")
def lower_mat_mul(op, args):
    """numpy matmul: 2-D -> matmul; rhs 2-D -> lhs rows folded into one matmul; otherwise
    the batch dimensions are broadcast, folded into one and fed to batch_matmul."""
    linalg = _mlir.linalg
    a, b = args
    (spec,) = op.result_specs
    element = element_of(a)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if len(a_shape) == 1:
        a = reshape(a, (1,) + a_shape)
    if len(b_shape) == 1:
        b = reshape(b, b_shape + (1,))
    a_shape, b_shape = shape_of(a), shape_of(b)
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    if not batch:
        y = matmul2d(a, b)
    elif len(b_shape) == 2:
        rows = prod(a_shape[:-1])
        y = matmul2d(reshape(a, (rows, k)), b)
    else:
        count = prod(batch)
        a3 = reshape(broadcast_to(a, batch + (m, k)), (count, m, k))
        b3 = reshape(broadcast_to(b, batch + (k, n)), (count, k, n))
        y = linalg.batch_matmul(a3, b3, outs=[zeros((count, m, n), element)])
    return [reshape(y, spec.shape)]
