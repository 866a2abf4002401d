"""A contraction copied out permuted computes the permuted layout itself.

Attention's projections and its product with V are stored as heads through a
transpose that only copies (``[S, H, D] -> [H, S, D]``). As the root of a kernel, that
copy folds away once a thread's tile is cut to rows (its maps become identities), and
the product's tile, computed in a private array, is copied out element by element.
``fold_permuting_copies(module)`` gives the copy's layout to the contraction instead:
its output map permuted, its accumulator a fill of the copy's shape; the contraction is
then the root and the matmul schedule stores its rows directly. Only where the
innermost dim stays innermost: a transposed store would lose the K step.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import indexing_maps, linalg_init, parallel_loops, set_linalg_init
from .kernels import is_contraction
from .reshaped_fills import fill_of, own_fill


def _permutation(amap) -> list | None:
    """The loop each result of ``amap`` is, when they are all of its loops once each."""
    if len(amap.results) != amap.n_dims or not all(isinstance(e, ir.AffineDimExpr) for e in amap.results):
        return None
    dims = [ir.AffineDimExpr(e).position for e in amap.results]
    return dims if sorted(dims) == list(range(amap.n_dims)) else None


def _copied(op):
    """(the value ``op`` copies, the loop of ``op`` each of its dims is) when ``op`` is a
    ``linalg.generic`` copying its one input, permuted, into its result; else None."""
    if op.name != "linalg.generic" or len(op.operands) != 2 or not all(parallel_loops(op) or [False]):
        return None
    body = list(op.regions[0].blocks[0].operations)
    block = op.regions[0].blocks[0]
    read, written = indexing_maps(op)
    if len(body) != 1 or body[0].operands[0] != block.arguments[0] or \
            written != ir.AffineMap.get_identity(written.n_dims):
        return None
    order = _permutation(read)
    return (op.operands[0], order) if order is not None else None


def fold_permuting_copies(module) -> int:
    """Fold each permuting copy of a contraction's result (its only use) into the
    contraction, where the copy keeps the innermost dim innermost; returns how many."""
    folded = 0
    for copy in walk_ops(module.operation, {"linalg.generic"}):
        copied = _copied(copy)
        product = copied[0].owner if copied and isinstance(copied[0], ir.OpResult) else None
        if product is None or not is_contraction(product) or len(list(copied[0].uses)) != 1:
            continue
        order = copied[1]
        fill = fill_of(linalg_init(product))
        if fill is None or order[-1] != len(order) - 1:
            continue
        maps = indexing_maps(product)
        written = list(maps[-1].results)
        permuted = [written[order.index(dim)] for dim in range(len(order))]
        result = copy.results[0].type
        set_linalg_init(product, own_fill(fill, result, ir.InsertionPoint(product)))
        maps[-1] = ir.AffineMap.get(maps[-1].n_dims, 0, permuted)
        product.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
        product.results[0].set_type(result)
        copy.results[0].replace_all_uses_with(product.results[0])
        copy.erase()
        folded += 1
    return folded


__all__ = ["fold_permuting_copies"]
