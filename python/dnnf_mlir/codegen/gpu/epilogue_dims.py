"""Where a contraction's result dims are in its root group's result.

A kernel's root is its contraction, or the last of an epilogue of element-wise ops
reading it (bias, activation, residual add), possibly written permuted: an attention
projection's [S, H, D] product stored as heads, [H, S, D], or a product of heads
stored back as [S, H, D]. The matmul schedule (``tilings.rows_dim``) tiles the
root's result; knowing which of its dims are the product's rows and columns lets it
give such a root the register tile and K step of a plain matmul.
"""

from __future__ import annotations

from ..._mlir import ir
from ..linalg_queries import indexing_maps, linalg_inputs, parallel_loops
from .kernels import RootGroup, expr_dims


def _minor_dim(expr) -> int | None:
    """The loop that moves ``expr`` by one: ``expr`` itself when it is a loop dim, the
    last term of a folded reshape's ``d1 * 32 + d3`` (heads times head size plus the
    dim within a head); None for anything else."""
    if isinstance(expr, ir.AffineDimExpr):
        return ir.AffineDimExpr(expr).position
    if isinstance(expr, ir.AffineAddExpr):
        last = ir.AffineAddExpr(expr).rhs
        return ir.AffineDimExpr(last).position if isinstance(last, ir.AffineDimExpr) else None
    return None


def _minor_dims(amap) -> list | None:
    """The loop each result of ``amap`` moves along (``_minor_dim``), when they are all
    known and distinct."""
    dims = [_minor_dim(e) for e in amap.results]
    return dims if None not in dims and len(set(dims)) == len(dims) else None


def _is_elementwise(op) -> bool:
    """A ``linalg.generic`` of parallel loops writing its result in loop order."""
    if op.name != "linalg.generic" or not all(parallel_loops(op) or [False]):
        return False
    output = indexing_maps(op)[-1]
    return output == ir.AffineMap.get_identity(output.n_dims)


def root_dims(root, contraction) -> list | None:
    """Per dim of ``contraction``'s result, the dim of ``root``'s result it moves along
    (``_minor_dim``): ``root`` is the contraction, or an element-wise op reading it
    through a chain of element-wise ops, each reading the previous one's result in any
    order of its dims, or through a reshape folded into its map. None when ``root`` is
    no such op."""
    if root == contraction:
        return list(range(len(indexing_maps(root)[-1].results)))
    if not _is_elementwise(root):
        return None
    for value, amap in zip(linalg_inputs(root), indexing_maps(root)):
        owner = value.owner if isinstance(value, ir.OpResult) else None
        order = _minor_dims(amap)
        if owner is None or order is None or not owner.name.startswith("linalg."):
            continue
        inner = root_dims(owner.operation, contraction)
        if inner is not None:
            return [order[d] for d in inner]
    return None


def product_dims(group: RootGroup, kinds=("contraction",)) -> tuple | None:
    """(rows, columns): the dims of ``group``'s root result that its contraction's rows
    (the output dim missing from the operand that walks the innermost output dim: a
    matmul's rows, a convolution's output channels) and innermost output dim are, when
    the root writes one of them innermost (a result written transposed, K^T, has its
    rows innermost, through any element-wise epilogue: a bias, fp16 storage's
    narrowing) and the group is of one of ``kinds`` (an attention chain's is a
    reduction); None otherwise."""
    rank = len(group.shape)
    dims = root_dims(group.root, group.contraction) if group.kind in kinds and rank >= 2 else None
    if not dims:  # none, or a contraction to a scalar (a sum of squares over all axes): no rows nor columns
        return None
    maps = indexing_maps(group.contraction)
    output = [ir.AffineDimExpr(e).position for e in maps[-1].results]
    for amap in maps[:-1]:
        used = set().union(*(expr_dims(e) for e in amap.results))
        missing = [d for d in output[:-1] if d not in used]
        if output[-1] in used and missing:
            rows, columns = dims[output.index(missing[-1])], dims[-1]
            return (rows, columns) if rank - 1 in (rows, columns) else None
    return None


__all__ = ["product_dims", "root_dims"]
