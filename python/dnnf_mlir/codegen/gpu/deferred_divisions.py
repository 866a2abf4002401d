"""A contraction of quotients by a per-row divisor as the contraction, then the division:
``sum_k (a[i, k] / s[i]) * v[k, j]`` -> ``(sum_k a[i, k] * v[k, j]) / s[i]``.

Attention's probabilities are ``exp(x - max) / sum`` per row, and the element-wise
fusion of ``prepare`` puts that division into the body of their product with V, where
it runs once per product and leaves a body no register tile vectorizes (a division
before the multiply-add). Deferred, as flash attention does, the product is a plain
contraction (``contraction_steps.is_matmul_like``: rows of a register tile, K stepped
by 4) and the division an epilogue of one per output: ``s`` is read along parallel
dims only and the product starts from zero, so the sums are the same up to rounding.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import affine_map, generic
from ..linalg_queries import indexing_maps, linalg_init, linalg_inputs, parallel_loops
from .kernels import is_contraction
from .reshaped_fills import fill_of, fill_value


def _zero_init(value) -> bool:
    """Whether ``value`` (a contraction's init) is a fill (``fill_of``) of the constant 0.0."""
    fill = fill_of(value)
    scalar = fill_value(fill) if fill is not None else None
    constant = scalar.owner if isinstance(scalar, ir.OpResult) else None
    return (constant is not None and constant.name == "arith.constant"
            and ir.FloatAttr(constant.attributes["value"]).value == 0.0)


def _quotient_product(op) -> tuple | None:
    """(dividend, divisor, factor): the input positions of a contraction ``op`` whose body
    is ``acc + (dividend / divisor) * factor`` (the quotient on either side), the divisor
    read along parallel loops that the result keeps, starting from zeros; None otherwise."""
    if not is_contraction(op) or len(linalg_inputs(op)) != 3:
        return None
    block = op.regions[0].blocks[0]
    body = [o for o in block.operations][:-1]
    if [o.name for o in body] != ["arith.divf", "arith.mulf", "arith.addf"]:
        return None
    divide, multiply, _ = body
    arguments = list(block.arguments)
    if not all(isinstance(v, ir.BlockArgument) for v in divide.operands):
        return None
    dividend, divisor = (arguments.index(v) for v in divide.operands)
    terms = list(multiply.operands)
    if divide.results[0] not in terms:
        return None
    factor = terms[1] if terms[0] == divide.results[0] else terms[0]
    if not isinstance(factor, ir.BlockArgument) or {dividend, divisor, arguments.index(factor)} != {0, 1, 2}:
        return None
    maps, parallel = indexing_maps(op), parallel_loops(op)
    output = [e for e in maps[-1].results]
    kept = [ir.AffineDimExpr(e).position for e in output if isinstance(e, ir.AffineDimExpr)]
    if len(kept) != len(output):
        return None
    read = [e for e in maps[divisor].results]
    if not all(isinstance(e, ir.AffineDimExpr) and parallel[ir.AffineDimExpr(e).position]
               and ir.AffineDimExpr(e).position in kept for e in read):
        return None
    if not _zero_init(linalg_init(op)):
        return None
    return dividend, divisor, arguments.index(factor)


def defer_divisions(module: ir.Module) -> int:
    """Rewrite every contraction of quotients (``_quotient_product``) of ``module``'s
    kernels as the contraction of the dividends, then an element-wise division of its
    result by the divisor. Returns how many."""
    rewritten = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        found = _quotient_product(op)
        if found is None:
            continue
        dividend, divisor, factor = found
        inputs, maps = linalg_inputs(op), indexing_maps(op)
        init = linalg_init(op)
        kept = [ir.AffineDimExpr(e).position for e in maps[-1].results]
        result = ir.RankedTensorType(op.results[0].type)
        with ir.InsertionPoint(op), op.location:
            (product,) = generic([inputs[dividend], inputs[factor]], [maps[dividend], maps[factor], maps[-1]],
                                 [init], lambda a, v, acc: _mlir.arith.addf(acc, _mlir.arith.mulf(a, v)),
                                 ["parallel" if p else "reduction" for p in parallel_loops(op)])
            rank = result.rank
            per_row = affine_map(rank, [kept.index(ir.AffineDimExpr(e).position) for e in maps[divisor].results])
            empty = _mlir.tensor.empty(result.shape, result.element_type)
            identity = ir.AffineMap.get_identity(rank)
            (quotient,) = generic([product, inputs[divisor]], [identity, per_row, identity], [empty],
                                  lambda x, s, _out: _mlir.arith.divf(x, s))
        op.results[0].replace_all_uses_with(quotient)
        op.erase()
        rewritten += 1
    return rewritten


__all__ = ["defer_divisions"]
