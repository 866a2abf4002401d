"""Contractions rewritten into the named ops that the schedules recognise, for any target.

``generic_contractions_to_matmul``: a contraction written as a ``linalg.generic``
(an einsum, a MatMul after its producers were merged) becomes ``linalg.matmul`` /
``batch_matmul`` on collapsed and transposed operands; ``normalize_matmuls``: a
matmul reading an operand transposed (Q @ K^T) gets a ``linalg.transpose`` + the
plain op (``transposed_operands`` says which operands a matmul reads transposed). A
contraction must always reach the matmul kernels, whatever surrounds it.
"""

from __future__ import annotations

import math
from typing import Optional

from .. import _mlir
from .._mlir import ir
from .linalg_queries import (has_default_maps, indexing_maps, is_f32, linalg_ops, parallel_loops, reassociation,
                             static_tensor_type)


def transposed_operands(op) -> Optional[tuple]:
    """(A read transposed, B read transposed) for a ``linalg.matmul`` / ``batch_matmul``
    with ``indexing_maps`` that reads each of A and B plainly or transposed and writes C
    plainly; else None."""
    if op.name not in ("linalg.matmul", "linalg.batch_matmul") or "indexing_maps" not in op.attributes:
        return None
    maps = indexing_maps(op)
    nb = maps[0].n_dims - 3
    dims = [_map_dims(m) for m in maps]
    batch = list(range(nb))
    m_, n_, k_ = nb, nb + 1, nb + 2
    if dims[2] != batch + [m_, n_] or dims[0] not in (batch + [m_, k_], batch + [k_, m_]) or dims[1] not in (
        batch + [k_, n_],
        batch + [n_, k_],
    ):
        return None
    return dims[0][-1] == m_, dims[1][-1] == k_


def normalize_matmuls(module: ir.Module) -> int:
    """``linalg.matmul`` / ``batch_matmul`` reading A or B transposed (``indexing_maps``,
    e.g. Q @ K^T) -> a ``linalg.transpose`` of that operand + the plain op, which gets
    the packed micro-kernel. Returns how many ops were rewritten."""
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in linalg_ops(module):
        layout = transposed_operands(op)
        if layout is None or has_default_maps(op) or len(op.results) != 1:
            continue
        types = [static_tensor_type(v) for v in op.operands[:3]]
        if any(t is None for t in types):
            continue
        nb = indexing_maps(op)[0].n_dims - 3
        batch = list(range(nb))
        with ir.InsertionPoint(op), op.location:
            operands = []
            for value, t, transposed in zip(op.operands[:2], types[:2], layout):
                if transposed:
                    shape = list(t.shape[:nb]) + [t.shape[-1], t.shape[-2]]
                    empty = tensor.empty(shape, t.element_type)
                    value = linalg.transpose(value, outs=[empty], permutation=batch + [nb + 1, nb]).result
                operands.append(value)
            build = linalg.matmul if nb == 0 else linalg.batch_matmul
            new = build(*operands, outs=[op.operands[2]])
        op.results[0].replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def _map_dims(amap) -> Optional[list]:
    """Dim positions of a projected-permutation map, None for any other map."""
    dims = []
    for expr in amap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(expr).position)
    return dims if len(set(dims)) == len(dims) else None


def _slice_of(value, block):
    """(block arguments, ops of ``block`` in order) computing ``value``; None when it
    depends on anything but pure arith / math ops."""
    args, ops, seen = set(), [], set()

    def visit(v):
        if isinstance(v, ir.BlockArgument):
            if v.owner == block:
                args.add(v.arg_number)
            return True
        owner = v.owner.operation
        if owner.block != block:
            return True  # defined outside the body
        if owner in seen:
            return True
        if owner.name.split(".")[0] not in ("arith", "math"):
            return False
        seen.add(owner)
        if not all(visit(o) for o in owner.operands):
            return False
        ops.append(owner)
        return True

    if not visit(value):
        return None
    order = {op: i for i, op in enumerate(block.operations)}
    return args, sorted(ops, key=lambda o: order[o])


def _materialize_operand(op, value, maps, block):
    """A tensor and its dims (positions in ``op``'s loops) holding ``value`` of ``op``'s
    body: an input when ``value`` is one, else a new element-wise linalg.generic over
    the loops its inputs use (e.g. GELU or the softmax division fused into a matmul)."""
    linalg = _mlir.linalg
    n_inputs = len(op.operands) - 1
    found = _slice_of(value, block)
    if found is None:
        return None
    args, body = found
    if not args or max(args) >= n_inputs:
        return None
    if not body and len(args) == 1:
        (arg,) = args
        return op.operands[arg], _map_dims(maps[arg])
    space = sorted({d for a in args for d in _map_dims(maps[a])})
    inputs = sorted(args)
    sizes = {}
    for a in inputs:
        for d, s in zip(_map_dims(maps[a]), static_tensor_type(op.operands[a]).shape):
            sizes[d] = s
    f32 = ir.F32Type.get()
    shape = [sizes[d] for d in space]
    new_maps = [
        ir.AffineMap.get(len(space), 0, [ir.AffineDimExpr.get(space.index(d)) for d in _map_dims(maps[a])]) for a in inputs
    ]
    new_maps.append(ir.AffineMap.get_identity(len(space)))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    empty = _mlir.tensor.empty(shape, f32)
    generic = linalg.GenericOp(
        [ir.RankedTensorType.get(shape, f32)],
        [op.operands[a] for a in inputs],
        [empty],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps]),
        ir.ArrayAttr.get([parallel] * len(space)),
    )
    new_block = generic.regions[0].blocks.append(*([f32] * (len(inputs) + 1)))
    mapping = {}
    with ir.InsertionPoint(new_block):
        for body_op in body:
            clone = body_op.clone(ip=ir.InsertionPoint(new_block))
            for i, operand in enumerate(clone.operands):
                if isinstance(operand, ir.BlockArgument) and operand.owner == block:
                    clone.operands[i] = new_block.arguments[inputs.index(operand.arg_number)]
                elif isinstance(operand, ir.OpResult) and operand.owner.operation in mapping:
                    clone.operands[i] = mapping[operand.owner.operation].results[operand.result_number]
            mapping[body_op] = clone
        if isinstance(value, ir.BlockArgument):
            result = new_block.arguments[inputs.index(value.arg_number)]
        else:
            result = mapping[value.owner.operation].results[value.result_number]
        linalg.YieldOp([result])
    return generic.results[0], space


def _transposed(value, dims, order):
    """``value`` (indexed by loop ``dims``) with its dims permuted into ``order``."""
    if dims == order:
        return value
    t = static_tensor_type(value)
    perm = [dims.index(d) for d in order]
    empty = _mlir.tensor.empty([t.shape[p] for p in perm], t.element_type)
    return _mlir.linalg.transpose(value, outs=[empty], permutation=perm).results[0]


def _group_ranges(groups):
    starts = [sum(groups[:i]) for i in range(len(groups))]
    return [list(range(s, s + g)) for s, g in zip(starts, groups)]


def _group_sizes(shape, groups):
    return [math.prod(shape[d] for d in r) for r in _group_ranges(groups)]


def _collapsed(value, groups):
    """``value`` with consecutive dims merged, ``groups`` of them at a time."""
    t = static_tensor_type(value)
    if len(groups) == t.rank:
        return value
    collapsed = ir.RankedTensorType.get(_group_sizes(list(t.shape), groups), t.element_type)
    return _mlir.tensor.collapse_shape(collapsed, value, reassociation(_group_ranges(groups)))


def _contraction_body(op):
    """(x, y) with the body computing ``acc + x * y`` (f32), else None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    yielded = ops[-1].operands[0] if len(ops[-1].operands) == 1 else None
    add = yielded.owner if isinstance(yielded, ir.OpResult) else None
    if add is None or add.name != "arith.addf":
        return None
    acc = block.arguments[len(block.arguments) - 1]
    lhs, rhs = add.operands
    product = rhs if lhs == acc else lhs if rhs == acc else None
    mul = product.owner if isinstance(product, ir.OpResult) else None
    if mul is None or mul.name != "arith.mulf" or mul.operation.block != block:
        return None
    if len(list(product.uses)) != 1 or len(list(acc.uses)) != 1:
        return None
    return block, mul.operands[0], mul.operands[1]


def generic_contractions_to_matmul(module: ir.Module) -> int:
    """Rewrite f32 ``linalg.generic`` contractions (``acc + x * y`` over projected
    permutations, as ONNX MatMul / Gemm / Einsum convert) as ``linalg.matmul`` or
    ``batch_matmul`` on transposed, collapsed operands.

    They get the packed micro-kernel instead of the generic strategy, which vectorizes
    the whole reduction of each output element (slow, and it unrolls into hundreds of
    thousands of scalar ops). Element-wise work fused into an operand (GELU, the
    softmax division) becomes an element-wise generic of its own. Returns how many
    contractions were rewritten.
    """
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in linalg_ops(module):
        if op.name != "linalg.generic" or len(op.results) != 1:
            continue
        out = static_tensor_type(op.results[0])
        parallel = parallel_loops(op)
        if out is None or not is_f32(out) or all(parallel):
            continue
        if any(static_tensor_type(v) is None or not is_f32(static_tensor_type(v)) for v in op.operands):
            continue
        maps = indexing_maps(op)
        if any(_map_dims(m) is None for m in maps):
            continue
        body = _contraction_body(op)
        if body is None:
            continue
        block, x_value, y_value = body
        c_dims = _map_dims(maps[-1])
        reduction = {d for d, is_parallel in enumerate(parallel) if not is_parallel}
        if reduction & set(c_dims):
            continue
        # Check the dims before creating anything.
        operand_dims = []
        for v in (x_value, y_value):
            found = _slice_of(v, block)
            if found is None or not found[0] or max(found[0]) >= len(op.operands) - 1:
                break
            operand_dims.append({d for a in found[0] for d in _map_dims(maps[a])})
        if len(operand_dims) != 2:
            continue
        xs, ys, cs = operand_dims[0], operand_dims[1], set(c_dims)
        k_dims = xs & ys - cs
        if k_dims != reduction or (xs | ys) != set(range(len(parallel))) or not cs <= (xs | ys):
            continue
        b_dims = [d for d in c_dims if d in xs and d in ys]
        m_dims = [d for d in c_dims if d in xs and d not in ys]
        n_dims = [d for d in c_dims if d in ys and d not in xs]
        if not m_dims or not n_dims:
            continue
        with ir.InsertionPoint(op), op.location:
            x, x_dims = _materialize_operand(op, x_value, maps, block)
            y, y_dims = _materialize_operand(op, y_value, maps, block)
            k_order = [d for d in x_dims if d in k_dims]
            sizes = dict(zip(c_dims, out.shape))
            sizes.update(zip(x_dims, static_tensor_type(x).shape))
            sizes.update(zip(y_dims, static_tensor_type(y).shape))
            nb, nm, nn, nk = len(b_dims), len(m_dims), len(n_dims), len(k_order)
            if math.prod(sizes[d] for d in b_dims) > 1:
                build, a_groups, b_groups, c_groups = linalg.batch_matmul, [nb, nm, nk], [nb, nk, nn], [nb, nm, nn]
            else:  # unit batch dims join M (and K for B)
                build, a_groups, b_groups, c_groups = linalg.matmul, [nb + nm, nk], [nb + nk, nn], [nb + nm, nn]
            a = _collapsed(_transposed(x, x_dims, b_dims + m_dims + k_order), a_groups)
            b = _collapsed(_transposed(y, y_dims, b_dims + k_order + n_dims), b_groups)
            mnk = b_dims + m_dims + n_dims
            init = op.operands[-1]
            init_op = init.owner if isinstance(init, ir.OpResult) else None
            if init_op is not None and init_op.name == "linalg.fill":
                empty = tensor.empty(_group_sizes([sizes[d] for d in mnk], c_groups), out.element_type)
                c = linalg.fill(init_op.operands[0], outs=[empty])
            else:
                c = _collapsed(_transposed(init, c_dims, mnk), c_groups)
            mm = build(a, b, outs=[c])
            if len(c_groups) != len(mnk):
                expanded = ir.RankedTensorType.get([sizes[d] for d in mnk], out.element_type)
                mm = tensor.expand_shape(expanded, mm, reassociation(_group_ranges(c_groups)), [], [sizes[d] for d in mnk])
            result = _transposed(mm, mnk, c_dims)
        op.results[0].replace_all_uses_with(result)
        op.erase()
        count += 1
    return count



__all__ = ["generic_contractions_to_matmul", "normalize_matmuls", "transposed_operands"]
