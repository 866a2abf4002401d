"""Matrix-vector products: ``[1, K] x [N, K]^T`` (ONNX Gemm with ``transB`` at batch 1).

The classifier layers of the CNNs (AlexNet's 9216 x 4096, VGG's 25088 x 4096, ...)
read each weight once per call, so they are bound by memory bandwidth. As a
``linalg.matmul`` the weights would be transposed into a new buffer on every call
(``normalize_matmuls``) and then walked K rows apart, one cache line per 16 KiB;
``rewrite_matvecs`` instead keeps the ``[N, K]`` layout and splits K into vectors::

    partial[n, l] += W[n, kk, l] * x[kk, l]       (W: [N, K/L, L], x: [K/L, L])
    y[0, n]        = init[0, n] + sum_l partial[n, l]

``schedule_matvec`` gives the first generic register tiles of NR rows x one vector:
NR contiguous weight streams, NR independent FMA chains, the accumulators in
registers over the whole of K, and one horizontal sum per output at the end.

Not in a recurrence's loop over its time steps: there R^T is transposed once, before
the loop, and each step's ``[1, H] x [H, G]`` runs as a matmul of one wide register tile
(``tiles.matmul_register_tile``) that adds broadcasts of h times rows of R^T: no
horizontal sum per output and step.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...kernel_functions import is_time_step_loop
from ...linalg_builders import affine_map, generic
from ..kernel_plan import OpSchedule
from ..linalg_queries import (has_default_maps, indexing_maps, is_f32, linalg_ops, reassociation, reassociation_groups,
                              static_tensor_type)

MARK = "dnnf.matvec"  # unit attribute on the partial-sum generic
ROWS = 8  # NR: output rows per register tile


def _transposed_source(value):
    """The tensor ``[N, k1, k2, ...]`` that ``value`` (``[K, N]``) transposes, or None.

    Besides a plain 2-d transpose, this sees through what
    ``generic_contractions_to_matmul`` makes of a Gemm whose K was expanded (the
    flattened feature maps of a CNN): a ``collapse_shape`` of the K dims of a
    transpose that moves N from the front to the end.
    """
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is not None and owner.name == "tensor.collapse_shape":
        groups = reassociation_groups(owner)
        value = owner.operands[0]
        rank = static_tensor_type(value).rank
        if groups != [list(range(rank - 1)), [rank - 1]]:
            return None
        owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "linalg.transpose":
        return None
    rank = static_tensor_type(value).rank
    if list(ir.DenseI64ArrayAttr(owner.attributes["permutation"])) != [*range(1, rank), 0]:
        return None
    return owner.operands[0]


def _weight_nk(op):
    """The ``[N, ...K]`` operand of a 2-d ``linalg.matmul`` that reads B transposed
    (through ``indexing_maps`` or a ``linalg.transpose``), else None."""
    b = op.operands[1]
    if has_default_maps(op):
        return _transposed_source(b)
    maps = indexing_maps(op)
    dims = [[ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None for e in m.results] for m in maps]
    if dims == [[0, 2], [1, 2], [0, 1]]:
        return b
    return None


def rewrite_matvecs(module: ir.Module, lanes: int) -> int:
    """Rewrite f32 ``linalg.matmul`` of ``[1, K] x [N, K]^T`` (K a multiple of
    ``lanes``) as the two generics above. Returns how many were rewritten."""
    linalg, tensor, arith = _mlir.linalg, _mlir.tensor, _mlir.arith
    count = 0
    for op in linalg_ops(module):
        if op.name != "linalg.matmul" or len(op.results) != 1 or is_time_step_loop(op.parent):
            continue
        a, c = static_tensor_type(op.operands[0]), static_tensor_type(op.results[0])
        weight = _weight_nk(op)
        w = static_tensor_type(weight) if weight is not None else None
        if a is None or c is None or w is None or not (is_f32(a) and is_f32(c) and is_f32(w)):
            continue
        (m, k), n = a.shape, w.shape[0]
        if m != 1 or k % lanes or k < 4 * lanes:
            continue
        f32 = c.element_type
        with ir.InsertionPoint(op), op.location:
            if w.rank > 2:
                flat = ir.RankedTensorType.get([n, k], f32)
                weight = tensor.collapse_shape(flat, weight, reassociation([[0], list(range(1, w.rank))]))
            x = tensor.collapse_shape(ir.RankedTensorType.get([k], f32), op.operands[0], reassociation([[0, 1]]))
            x = tensor.expand_shape(ir.RankedTensorType.get([k // lanes, lanes], f32), x, reassociation([[0, 1]]), [], [k // lanes, lanes])
            wv = tensor.expand_shape(
                ir.RankedTensorType.get([n, k // lanes, lanes], f32), weight, reassociation([[0], [1, 2]]), [], [n, k // lanes, lanes]
            )
            zero = arith.constant(f32, 0.0)
            acc = linalg.fill(zero, outs=[tensor.empty([n, lanes], f32)])
            (partial,) = generic(
                [wv, x], [affine_map(3, [0, 1, 2]), affine_map(3, [1, 2]), affine_map(3, [0, 2])], [acc],
                lambda wi, xi, acc: arith.addf(acc, arith.mulf(wi, xi)), ["parallel", "reduction", "parallel"],
            )
            partial.owner.attributes[MARK] = ir.UnitAttr.get()
            init = tensor.collapse_shape(ir.RankedTensorType.get([n], f32), op.operands[2], reassociation([[0, 1]]))
            (total,) = generic(
                [partial], [affine_map(2, [0, 1]), affine_map(2, [0])], [init], lambda p, acc: arith.addf(acc, p),
                ["parallel", "reduction"],
            )
            y = tensor.expand_shape(c, total, reassociation([[0, 1]]), [], [1, n])
        op.results[0].replace_all_uses_with(y)
        op.erase()  # the transpose, if any, is dead now: canonicalization erases it
        count += 1
    return count


def schedule_matvec(planner, op):
    """Register tiles of ROWS x one vector over the whole of K (see the module doc)."""
    s = planner.script
    n, kk, lanes = static_tensor_type(op.operands[0]).shape
    tag = planner.new_tag(op)
    rows = next(r for r in (ROWS, 4, 2, 1) if n % r == 0)
    details = dict(register_tile=(rows, lanes))
    h = s.match([op.name], tag=tag)
    fill = s.producer_of(h, 2)
    if planner.threads > 1 and n % (rows * planner.threads) == 0:
        h, forall = s.tile_forall(h, [n // planner.threads, 0, 0])
        s.fuse_into(fill, forall)
        details["forall"] = n // planner.threads
    h, loops = s.fuse(h, [rows, 0, 0])
    h, kloop = s.tile_for(h, [0, 1, 0])
    unroll = next((u for u in (4, 2) if kk % u == 0 and kk > u), 1)
    if unroll > 1:
        s.emit(f"transform.loop.unroll {kloop[0]} {{factor = {unroll}}} : !transform.any_op")
        h = s.match([op.name], tag=tag, within=loops[0])
        details["k_unroll"] = unroll
    s.vectorize(h)
    planner.vectorize_fills(s.match(["linalg.fill"], within=loops[0]))
    planner.cleanup()
    planner.add_schedule(OpSchedule(tag, "matvec", (n, kk * lanes), "matvec", details))


__all__ = ["MARK", "rewrite_matvecs", "schedule_matvec"]
