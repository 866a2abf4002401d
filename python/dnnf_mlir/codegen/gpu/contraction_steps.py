"""The reduction step of a GPU matmul's register tile: K in steps of ``K_STEP``.

A thread of a matmul-like contraction (a matmul, a batch matmul, an attention's
``Q K^T``: every operand indexed by plain loop dims) computes ``VECTOR`` rows of
``VECTOR`` outputs (``tilings.choose_tiling``). Stepping its reduction loop by 1 reads
one scalar of A per row and step; stepping it by ``K_STEP`` where K is A's innermost
(contiguous) dim reads a vec4 of A per row and ``K_STEP`` vec4 rows of B (or of B^T),
then does ``K_STEP`` FMAs of a broadcast A element and a row of B per output row, as
IREE's Mali and Adreno configurations do. Shapes it does not fit (K not a multiple of
``K_STEP``, A not contiguous along K, a convolution's windowed operands) keep the step
of 1: nothing is read past an operand's end.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import indexing_maps, parallel_loops
from .kernels import is_contraction, loop_ranges

K_STEP = 4  # reduction elements a thread's step covers: one vec4 of A per row
STEPPED_ATTR = "dnnf.gpu.stepped"  # on a thread's stepped contraction, for ``schedule.vectorize``


def _plain_dims(amap) -> list | None:
    """The loop each result of ``amap`` is, or None when one is not a plain loop dim."""
    if not all(isinstance(e, ir.AffineDimExpr) for e in amap.results):
        return None
    return [ir.AffineDimExpr(e).position for e in amap.results]


def _lhs_dims(op) -> list | None:
    """The loops A's dims index, for a matmul-like contraction ``op``: every operand
    indexed by plain loop dims, one input (A) not walking the output's innermost dim."""
    if not is_contraction(op):
        return None
    dims = [_plain_dims(m) for m in indexing_maps(op)]
    if None in dims or not dims[-1]:
        return None
    lhs = [d for d in dims[:-1] if d and dims[-1][-1] not in d]
    return lhs[0] if len(lhs) == 1 else None


def is_matmul_like(op) -> bool:
    """Whether ``op`` is a matmul, a batch matmul or another contraction of plain loop
    dims (not a convolution's windows), which the device profile's matmul workgroup takes."""
    return _lhs_dims(op) is not None


def reduction_step(op) -> tuple | None:
    """(the reduction loop, ``K_STEP``) for a matmul-like contraction ``op`` (a
    ``linalg.generic``) whose operand A (the one not walking the output's innermost dim)
    is contiguous along a reduction loop of a multiple of ``K_STEP`` iterations; None
    otherwise."""
    lhs = _lhs_dims(op)
    ranges = loop_ranges(op) if lhs else None
    if ranges is None:
        return None
    parallel = parallel_loops(op)
    k = lhs[-1]
    if parallel[k] or ranges[k] % K_STEP:
        return None
    return k, K_STEP


def is_stepped_contraction(op, ranges) -> bool:
    """Whether ``op``, with loop extents ``ranges``, is a thread's stepped contraction:
    one output row of at most ``K_STEP`` elements by one reduction step, which
    vectorizes into FMAs of broadcast elements of A and vec4 rows of B."""
    if not is_contraction(op):
        return False
    parallel = parallel_loops(op)
    wide = [d for d, r in enumerate(ranges) if r != 1]
    return (len(wide) == 2 and all(ranges[d] <= K_STEP for d in wide)
            and sorted(parallel[d] for d in wide) == [False, True])


def mark_stepped(module) -> int:
    """Mark (``STEPPED_ATTR``) the thread's stepped contractions of ``module``, which
    vectorize although two of their loops are wide. Returns how many."""
    marked = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        ranges = loop_ranges(op)
        if ranges is not None and is_stepped_contraction(op, ranges):
            op.attributes[STEPPED_ATTR] = ir.UnitAttr.get()
            marked += 1
    return marked


def widen_rows(module) -> int:
    """``extract(extf(x))`` -> ``extf(extract(x))`` where ``x`` is an n-d vector: in fp16
    storage a stepped contraction widens its ``K_STEP`` rows of B read as one 2-d
    vector and takes them apart after; SPIR-V has no 2-d vectors, so each row is
    widened on its own. Returns how many."""
    rewritten = 0
    for extract in walk_ops(module.operation, {"vector.extract"}):
        source = extract.operands[0]
        widening = source.owner if isinstance(source, ir.OpResult) else None
        if (widening is None or widening.name != "arith.extf" or len(extract.operands) != 1
                or ir.VectorType(source.type).rank < 2):
            continue
        result = extract.results[0].type
        half = ir.VectorType(widening.operands[0].type).element_type
        narrow = ir.VectorType.get(ir.VectorType(result).shape, half) if isinstance(result, ir.VectorType) else half
        with ir.InsertionPoint(extract), extract.location:
            row = _mlir.vector.extract(widening.operands[0], [], extract.attributes["static_position"], results=[narrow])
            extract.results[0].replace_all_uses_with(_mlir.arith.extf(result, row))
        extract.erase()
        rewritten += 1
    return rewritten


__all__ = ["K_STEP", "STEPPED_ATTR", "is_matmul_like", "is_stepped_contraction", "mark_stepped", "reduction_step",
           "widen_rows"]
