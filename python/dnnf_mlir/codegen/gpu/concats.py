"""Concatenations in a GPU kernel: each piece computed in place, in the slice of the
result it fills.

A ``tensor.concat`` has no tiling: a kernel that concatenates what it computes (a
SqueezeNet fire module's two expand convolutions, a DenseNet layer's new features
after the old ones) would compute every piece into a buffer of its own and copy it.
Instead:

1. an op reading a concatenation along a dim it maps straight to its output is applied
   to each piece (``relu(concat(a, b))`` -> ``concat(relu(a), relu(b))``, a max pool
   over concatenated channels likewise), its other operands sliced alike, so that
   every piece is computed where it is needed;
2. a concatenation becomes ``tensor.insert_slice`` of each piece into one
   destination, the op computing a piece writing into that slice of the destination
   (its ``tensor.empty`` init replaced by it); a piece that is not computed in the
   kernel (an argument) is copied by an element-wise op of its own.

Each piece is then a root of the kernel's schedule (``kernels.py``), and bufferization
writes it in place.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import generic
from ..linalg_queries import indexing_maps, parallel_loops, static_tensor_type
from ..lowered_module import walk_ops
from .kernels import expr_dims


def _concat_axis(concat) -> int:
    return ir.IntegerAttr(concat.attributes["dim"]).value


def _slice(value, axis: int, offset: int, size: int):
    t = static_tensor_type(value)
    offsets = [0] * t.rank
    sizes = list(t.shape)
    offsets[axis], sizes[axis] = offset, size
    result = ir.RankedTensorType.get(sizes, t.element_type)
    return _mlir.tensor.extract_slice(result, value, [], [], [], offsets, sizes, [1] * t.rank)


def _piece_init(init, sliced, amap, out_dim: int, size: int):
    """A piece's accumulator: an empty tensor or a fill of its own when the whole one is
    one (so that the piece can be computed in place, the fill with it), else the slice
    of the whole one."""
    fill = init.owner.operation if isinstance(init, ir.OpResult) else None
    t = static_tensor_type(init)
    shape = list(t.shape)
    shape[out_dim] = size
    if fill is not None and fill.name == "tensor.empty":
        return _mlir.tensor.empty(shape, t.element_type)  # its own, which the piece is then computed in
    if fill is None or fill.name != "linalg.generic" or any(isinstance(v.type, ir.RankedTensorType) for v in
                                                             list(fill.operands)[:-1]):
        return sliced
    empty = _mlir.tensor.empty(shape, t.element_type)  # before the clone, which reads it
    clone = fill.clone()
    clone.operands[len(clone.operands) - 1] = empty
    clone.results[0].set_type(ir.RankedTensorType.get(shape, t.element_type))
    return clone.results[0]


def _split_dim(op, concat):
    """(loop dim, output dim) along which ``op`` can be split at the pieces of
    ``concat``, one of its inputs: a parallel loop dim that the concatenation axis, the
    output and every other operand using it index directly; else None."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    maps = indexing_maps(op)
    inputs = list(op.operands)[: len(maps) - 1]
    amap = maps[inputs.index(concat.results[0])]
    axis_expr = amap.results[_concat_axis(concat)]
    if not isinstance(axis_expr, ir.AffineDimExpr):
        return None
    dim = ir.AffineDimExpr(axis_expr).position
    if not parallel_loops(op)[dim]:
        return None
    for m in maps:
        uses = [e for e in m.results if dim in expr_dims(e)]
        if any(not isinstance(e, ir.AffineDimExpr) for e in uses):
            return None
    output = [isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == dim for e in maps[-1].results]
    return (dim, output.index(True)) if any(output) else None


def _split_consumer(op, concat) -> bool:
    """``op(.., concat(a, b), ..)`` -> ``concat(op(.., a, ..), op(.., b, ..))`` along a
    dim the concatenation axis is (see ``_split_dim``): a relu, a batch norm, a max
    pool over the channels of concatenated branches."""
    split = _split_dim(op, concat)
    if split is None:
        return False
    dim, out_dim = split
    maps = indexing_maps(op)
    operands = list(op.operands)
    out = static_tensor_type(op.results[0])
    pieces, offset = [], 0
    with ir.InsertionPoint(op), op.location:
        for piece in concat.operands:
            size = static_tensor_type(piece).shape[_concat_axis(concat)]
            sliced = []
            for value, amap in zip(operands, maps):
                if value == concat.results[0]:
                    sliced.append(piece)
                    continue
                positions = [i for i, e in enumerate(amap.results) if dim in expr_dims(e)]
                if positions and isinstance(value.type, ir.RankedTensorType):
                    sliced.append(_slice(value, positions[0], offset, size))
                else:
                    sliced.append(value)
            inputs, init = sliced[:-1], _piece_init(operands[-1], sliced[-1], maps[-1], out_dim, size)
            block = op.regions[0].blocks[0]

            def body(*scalars, block=block):
                values = dict(zip(block.arguments, scalars))
                result = None
                for inner in block.operations:
                    if inner.name == "linalg.yield":
                        result = values.get(inner.operands[0], inner.operands[0])
                        break
                    clone = inner.clone()
                    for i, operand in enumerate(clone.operands):
                        if operand in values:
                            clone.operands[i] = values[operand]
                    for old, new in zip(inner.results, clone.results):
                        values[old] = new
                return result

            iterators = ["parallel" if p else "reduction" for p in parallel_loops(op)]
            pieces.append(generic(inputs, maps, [init], body, iterators)[0])
            offset += size
        joined = _mlir.tensor.concat(out, out_dim, pieces)
    op.results[0].replace_all_uses_with(joined)
    op.erase()
    return True


def split_concat_consumers(module: ir.Module) -> int:
    """Apply every op reading a concatenation to its pieces instead, where it can."""
    split = 0
    changed = True
    while changed:
        changed = False
        for concat in walk_ops(module.operation, {"tensor.concat"}):
            for use in list(concat.results[0].uses):
                if use.operand_number < len(use.owner.operands) - len(use.owner.results) and \
                        _split_consumer(use.owner, concat):
                    split += 1
                    changed = True
                    break
            if changed:
                break
    return split


def _copy(value, init):
    rank = static_tensor_type(value).rank
    identity = ir.AffineMap.get_identity(rank)
    return generic([value], [identity, identity], [init], lambda x, _out: x)[0]


def _init_chain_empty(piece):
    """(the ``tensor.empty`` that the op computing ``piece`` writes into, through the
    inits of its init's producers (a fill, then a pool), the first op of that chain);
    None when there is none or it is shared."""
    op = piece.owner.operation if isinstance(piece, ir.OpResult) else None
    if op is None or not op.name.startswith("linalg."):
        return None
    first = op
    init = op.operands[len(op.operands) - len(op.results) + piece.result_number]
    while isinstance(init, ir.OpResult) and init.owner.operation.name.startswith("linalg.") and len(list(init.uses)) == 1:
        first = init.owner.operation
        init = first.operands[len(first.operands) - 1]
    empty = init.owner.operation if isinstance(init, ir.OpResult) else None
    if empty is None or empty.name != "tensor.empty" or len(list(init.uses)) != 1:
        return None
    return empty, first


def _chain(first, last) -> list:
    """The ops from ``first`` to ``last`` along their init operands (``_init_chain_empty``)."""
    chain = [last]
    while chain[-1] != first:
        init = chain[-1].operands[len(chain[-1].operands) - 1]
        chain.append(init.owner.operation)
    return chain[::-1]


def _after(op) -> ir.InsertionPoint:
    ops = [o.operation for o in op.block.operations]
    return ir.InsertionPoint(ops[ops.index(op) + 1])


def _program_position(op) -> int:
    return [o.operation for o in op.block.operations].index(op)


def concats_to_pieces(module: ir.Module) -> int:
    """Every ``tensor.concat`` -> its pieces inserted into one destination, each
    computed in place (a piece from outside the kernel copied in). Returns how many.

    The pieces are computed in place in the program order of their ops: each op writes
    into a slice of the destination as it is after the insert of the piece before it
    (the ops of its init, a fill, moved right before it), and is inserted right after
    it: bufferization then sees every piece computed into, and put back at, the same
    slice of one buffer, and writes it in place.
    """
    tensor = _mlir.tensor
    count = 0
    for concat in walk_ops(module.operation, {"tensor.concat"}):
        if concat.parent.name != "func.func":
            continue
        out = static_tensor_type(concat.results[0])
        axis = _concat_axis(concat)
        pieces, offset = [], 0
        for piece in concat.operands:
            size = static_tensor_type(piece).shape[axis]
            op = piece.owner.operation if isinstance(piece, ir.OpResult) else None
            computed = op is not None and op.name.startswith("linalg.")
            pieces.append((piece, op if computed else None, offset, size))
            offset += size
        entry = concat.parent.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(entry), concat.location:
            destination = tensor.empty(list(out.shape), out.element_type)
        in_kernel = sorted((p for p in pieces if p[1] is not None), key=lambda p: _program_position(p[1]))
        copied = [p for p in pieces if p[1] is None]
        for piece, op, offset, size in in_kernel + copied:
            chain = _init_chain_empty(piece) if op is not None else None
            if chain is not None:
                empty, first = chain
                for member in _chain(first, op)[:-1]:  # right before the piece's op: after the inserts before it
                    member.move_before(op)
                with ir.InsertionPoint(first), concat.location:
                    target = _slice(destination, axis, offset, size)
                empty.results[0].replace_all_uses_with(target)
                empty.erase()
                insertion = _after(op)
            else:
                with ir.InsertionPoint(concat), concat.location:
                    piece = _copy(piece, _slice(destination, axis, offset, size))
                insertion = ir.InsertionPoint(concat)
            offsets = [0] * out.rank
            offsets[axis] = offset
            with insertion, concat.location:
                destination = tensor.insert_slice(piece, destination, [], [], [], offsets,
                                                  list(static_tensor_type(piece).shape), [1] * out.rank)
        concat.results[0].replace_all_uses_with(destination)
        concat.erase()
        count += 1
    return count


__all__ = ["concats_to_pieces", "split_concat_consumers"]
