"""Concatenations and paddings in a GPU kernel: each piece of a result computed in place,
in the slice of the result it fills.

A ``tensor.concat`` has no tiling: a kernel that concatenates what it computes (a
SqueezeNet fire module's two expand convolutions, a DenseNet layer's new features
after the old ones) would compute every piece into a buffer of its own and copy it.
Instead:

1. nested concatenations along one axis are one (Inception's branches joined in two
   steps); a padding that adds nothing along the axis is applied to each piece, and so
   is an op reading a concatenation along a dim it maps straight to its output
   (``relu(concat(a, b))`` -> ``concat(relu(a), relu(b))``, a max pool over
   concatenated channels likewise), its other operands sliced alike, so that every
   piece is computed where it is needed;
2. a concatenation becomes ``tensor.insert_slice`` of each piece into one
   destination, the op computing a piece (directly or through a reshape) writing into
   that slice of the destination (its ``tensor.empty`` init replaced by it); a piece
   that is not computed in the kernel (an argument) is copied by an element-wise op of
   its own;
3. a padding that the kernel returns of a value it computes is pieces too: the value
   computed in the interior, the border filled slab by slab.

Each piece is then a root of the kernel's schedule (``kernels.py``), the pieces groups
of one launch, and bufferization writes each in place.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import copy_into, generic, inline_body
from ..linalg_queries import (TENSOR_RESHAPES,
                              indexing_maps, linalg_init, linalg_input_count, linalg_inputs, pad_value, parallel_loops,
                              reassociation_groups, set_linalg_init, static_tensor_type)
from .kernels import expr_dims



def _concat_axis(concat) -> int:
    return ir.IntegerAttr(concat.attributes["dim"]).value


def _box(value, offsets: list, sizes: list):
    t = static_tensor_type(value)
    result = ir.RankedTensorType.get(sizes, t.element_type)
    return _mlir.tensor.extract_slice(result, value, [], [], [], offsets, sizes, [1] * t.rank)


def _slice(value, axis: int, offset: int, size: int):
    t = static_tensor_type(value)
    offsets = [0] * t.rank
    sizes = list(t.shape)
    offsets[axis], sizes[axis] = offset, size
    return _box(value, offsets, sizes)


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
    set_linalg_init(clone, empty)
    clone.results[0].set_type(ir.RankedTensorType.get(shape, t.element_type))
    return clone.results[0]


def _split_dim(op, concat):
    """(loop dim, output dim) along which ``op`` can be split at the pieces of
    ``concat``, one of its inputs: a parallel loop dim that the concatenation axis, the
    output and every other operand using it index directly; else None."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    maps = indexing_maps(op)
    inputs = linalg_inputs(op)
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
                return inline_body(block, dict(zip(block.arguments, scalars)))[0]

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
                if use.operand_number < linalg_input_count(use.owner) and \
                        _split_consumer(use.owner, concat):
                    split += 1
                    changed = True
                    break
            if changed:
                break
    return split


def flatten_nested_concats(module: ir.Module) -> int:
    """``concat(a, concat(b, c), d)`` -> ``concat(a, b, c, d)`` along one axis, where the
    inner one is read nowhere else (Inception's branches concatenated in two steps): its
    pieces are then computed in the slices of the outer result, not copied into it."""
    flattened = 0
    changed = True
    while changed:
        changed = False
        for concat in walk_ops(module.operation, {"tensor.concat"}):
            operands = []
            for piece in concat.operands:
                inner = piece.owner.operation if isinstance(piece, ir.OpResult) else None
                if inner is not None and inner.name == "tensor.concat" and \
                        _concat_axis(inner) == _concat_axis(concat) and len(list(piece.uses)) == 1:
                    operands += list(inner.operands)
                else:
                    operands.append(piece)
            if len(operands) == len(concat.operands):
                continue
            with ir.InsertionPoint(concat), concat.location:
                joined = _mlir.tensor.concat(concat.results[0].type, _concat_axis(concat), operands)
            concat.results[0].replace_all_uses_with(joined)
            concat.erase()
            flattened += 1
            changed = True
            break
    return flattened


def expand_concat_pieces(module: ir.Module) -> int:
    """``expand_shape(concat(a, b))`` adding unit dims only, read by another concatenation
    -> ``concat(expand_shape(a), expand_shape(b))``, the inner concatenation read nowhere
    else (a bidirectional recurrence's steps, each direction's sequence given a unit
    direction dim and concatenated with the other): the steps are then leaves of the
    outer concatenation (``_leaves``), each computed in place in its slice of the result
    rather than the inner result copied into it. Returns how many."""
    expanded = 0
    reshapes = walk_ops(module.operation, {"tensor.expand_shape"})
    while reshapes:  # a piece expanded here may be a concatenation in turn
        reshape = reshapes.pop(0)
        source = reshape.operands[0]
        concat = source.owner.operation if isinstance(source, ir.OpResult) else None
        uses = [use.owner.name for use in reshape.results[0].uses]
        if concat is None or concat.name != "tensor.concat" or len(list(source.uses)) != 1 or \
                set(uses) != {"tensor.concat"}:
            continue
        shape = static_tensor_type(reshape.results[0]).shape
        groups = reassociation_groups(reshape)
        wide = [[dim for dim in group if shape[dim] != 1] for group in groups]
        axis = _concat_axis(concat)
        if any(len(dims) > 1 for dims in wide) or len(wide[axis]) != 1:
            continue
        pieces = []
        with ir.InsertionPoint(reshape), reshape.location:
            for piece in concat.operands:
                sizes = list(shape)
                sizes[wide[axis][0]] = static_tensor_type(piece).shape[axis]
                piece_type = ir.RankedTensorType.get(sizes, static_tensor_type(piece).element_type)
                pieces.append(_mlir.tensor.expand_shape(piece_type, piece, reshape.attributes["reassociation"], [], sizes))
                reshapes.append(pieces[-1].owner.operation)
            joined = _mlir.tensor.concat(reshape.results[0].type, wide[axis][0], pieces)
        reshape.results[0].replace_all_uses_with(joined)
        reshape.erase()
        concat.erase()
        expanded += 1
    return expanded


def split_concat_pads(module: ir.Module) -> int:
    """``pad(concat(a, b))`` -> ``concat(pad(a), pad(b))`` where the pad adds nothing
    along the concatenation axis (a max pool's border around concatenated channels):
    each padded piece then becomes a gather of its own piece (``gathers.py``), which
    the pool, split at the pieces too, reads as an operand, not a gather of a value the
    kernel computes (that would need a dispatch of its own)."""
    split = 0
    returned = padded_results(module)
    for pad in walk_ops(module.operation, {"tensor.pad"}):
        if pad in returned:
            continue  # computed in place, pieces and all (``padded_results_to_pieces``)
        source = pad.operands[0]
        concat = source.owner.operation if isinstance(source, ir.OpResult) else None
        if concat is None or concat.name != "tensor.concat" or len(pad.operands) != 1:
            continue
        axis = _concat_axis(concat)
        low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
        high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
        if low[axis] != 0 or high[axis] != 0:
            continue
        padded = static_tensor_type(pad.results[0])
        pieces = []
        with ir.InsertionPoint(pad), pad.location:
            for piece in concat.operands:
                shape = list(padded.shape)
                shape[axis] = static_tensor_type(piece).shape[axis]
                clone = pad.clone()
                clone.operands[0] = piece
                clone.results[0].set_type(ir.RankedTensorType.get(shape, padded.element_type))
                pieces.append(clone.results[0])
            joined = _mlir.tensor.concat(padded, axis, pieces)
        pad.results[0].replace_all_uses_with(joined)
        pad.erase()
        split += 1
    return split


def _init_chain_empty(piece):
    """(the ``tensor.empty`` that the op computing ``piece`` writes into, through the
    inits of its init's producers (a fill, then a pool), the first op of that chain);
    None when there is none or it is shared."""
    op = piece.owner.operation if isinstance(piece, ir.OpResult) else None
    if op is None or not op.name.startswith("linalg."):
        return None
    first = op
    init = op.operands[linalg_input_count(op) + piece.result_number]
    while isinstance(init, ir.OpResult) and init.owner.operation.name.startswith("linalg.") and len(list(init.uses)) == 1:
        first = init.owner.operation
        init = linalg_init(first)
    empty = init.owner.operation if isinstance(init, ir.OpResult) else None
    if empty is None or empty.name != "tensor.empty" or len(list(init.uses)) != 1:
        return None
    return empty, first


def _chain(first, last) -> list:
    """The ops from ``first`` to ``last`` along their init operands (``_init_chain_empty``)."""
    chain = [last]
    while chain[-1] != first:
        init = linalg_init(chain[-1])
        chain.append(init.owner.operation)
    return chain[::-1]


def _after(op) -> ir.InsertionPoint:
    ops = [o.operation for o in op.block.operations]
    return ir.InsertionPoint(ops[ops.index(op) + 1])


def _computing_op(piece):
    """The linalg op that computes ``piece`` in the kernel, directly or through a
    reshape read nowhere else (a grouped convolution's groups collapsed into the
    channels of a concatenation); None for a piece from outside the kernel."""
    op = piece.owner.operation if isinstance(piece, ir.OpResult) else None
    if op is not None and op.name in TENSOR_RESHAPES:
        source = op.operands[0]
        op = source.owner.operation if isinstance(source, ir.OpResult) and len(list(source.uses)) == 1 else None
    return op if op is not None and op.name.startswith("linalg.") else None


def _reshaped_back(reshape, target):
    """``target`` (a slice of the destination, of ``reshape``'s result type) reshaped to
    ``reshape``'s source type: where the op computing the source writes."""
    source_type = reshape.operands[0].type
    groups = reshape.attributes["reassociation"]
    if reshape.name == "tensor.collapse_shape":
        return _mlir.tensor.expand_shape(source_type, target, groups, [], static_tensor_type(reshape.operands[0]).shape)
    return _mlir.tensor.collapse_shape(source_type, target, groups)


def _destination(tensor_type):
    """A new buffer for a concatenation's pieces: an allocation, not an empty tensor,
    which CSE would merge with another concatenation's of the same type (a DenseNet
    layer returns two), making bufferization copy one result out of the other's."""
    return _mlir.bufferization.AllocTensorOp(tensor_type, []).result


def _program_position(op) -> int:
    return [o.operation for o in op.block.operations].index(op)


def _reshape_between(piece, op):
    """The reshape between ``op`` and the ``piece`` it computes (``_computing_op``), or None."""
    return piece.owner.operation if piece.owner.operation != op else None


def _in_place_chain(piece, op):
    """``_init_chain_empty`` of what ``op`` computes ``piece`` from: None when ``op`` cannot
    be made to write in place (its init is not an empty tensor of its own)."""
    reshape = _reshape_between(piece, op)
    return _init_chain_empty(reshape.operands[0] if reshape else piece)


def _compute_in_place(piece, op, target_of):
    """Make ``op``, which computes ``piece`` (directly or through a reshape,
    ``_computing_op``) and has an ``_in_place_chain``, write into ``target_of()`` (a
    slice of a destination, built right before the first op of its init chain, which
    moves right before ``op``): the insertion point after which ``piece`` is final."""
    reshape = _reshape_between(piece, op)
    empty, first = _in_place_chain(piece, op)
    for member in _chain(first, op)[:-1]:  # right before the piece's op: after the inserts before it
        member.move_before(op)
    with ir.InsertionPoint(first), op.location:
        target = target_of()
        if reshape is not None:
            target = _reshaped_back(reshape, target)
    empty.results[0].replace_all_uses_with(target)
    empty.erase()
    if reshape is not None:
        reshape.move_after(op)
    return _after(reshape or op)


def _insert(piece, destination, offsets):
    rank = len(offsets)
    return _mlir.tensor.insert_slice(piece, destination, [], [], [], offsets,
                                     list(static_tensor_type(piece).shape), [1] * rank)


def _computed_again(piece, op):
    """(``piece`` computed by a copy of ``op``, of its init chain and of the reshape
    between, the copy of ``op``): an op writes one slice in place, and a copy of the
    piece made in the launch would read another group's result."""
    empty, first = _in_place_chain(piece, op)
    reshape = _reshape_between(piece, op)
    computed = reshape.operands[0] if reshape is not None else piece
    with _after(reshape or op), op.location:
        value = empty.clone().results[0]
        for member in _chain(first, op):
            number = computed.result_number if member == op else 0
            clone = member.clone().operation
            clone.operands[linalg_input_count(member) + number] = value
            value = clone.results[number]
        if reshape is not None:
            reshaped = reshape.clone().operation
            reshaped.operands[0] = value
            value = reshaped.results[0]
    return value, clone


def _leaves(value, offsets: list) -> list:
    """(piece, the op computing it or None, its offsets) of each piece that ``value``, a
    concatenation (nested ones included) or a value of its own, is made of, placed at
    ``offsets``."""
    concat = value.owner.operation if isinstance(value, ir.OpResult) else None
    if concat is None or concat.name != "tensor.concat":
        return [(value, _computing_op(value), offsets)]
    axis, found, offset = _concat_axis(concat), [], 0
    for piece in concat.operands:
        found += _leaves(piece, offsets[:axis] + [offsets[axis] + offset] + offsets[axis + 1:])
        offset += static_tensor_type(piece).shape[axis]
    return found


def _place(leaves: list, destination, before):
    """``destination`` with each of ``leaves`` inserted at its offsets, computed in place
    where the kernel computes it (``_compute_in_place``), else copied in right
    ``before`` the op that reads the whole: the new destination.

    The pieces are computed in place in the program order of their ops: each op writes
    into a slice of the destination as it is after the insert of the piece before it
    (the ops of its init, a fill, moved right before it), and is inserted right after
    it: bufferization then sees every piece computed into, and put back at, the same
    slice of one buffer, and writes it in place.
    """
    in_place, copied, computing = [], [], set()
    for piece, op, offsets in leaves:
        if op is None or _in_place_chain(piece, op) is None:
            copied.append((piece, op, offsets))  # after every piece computed in place
            continue
        if op in computing:  # a value concatenated twice (or two merged by CSE)
            piece, op = _computed_again(piece, op)
        in_place.append((piece, op, offsets))
        computing.add(op)
    ordered = [(leaf, True) for leaf in sorted(in_place, key=lambda leaf: _program_position(leaf[1]))]
    for (piece, op, offsets), computed in ordered + [(leaf, False) for leaf in copied]:
        shape = list(static_tensor_type(piece).shape)
        if computed:
            insertion = _compute_in_place(piece, op, lambda: _box(destination, offsets, shape))
        else:
            with ir.InsertionPoint(before), before.location:
                piece = copy_into(piece, _box(destination, offsets, shape))
            insertion = ir.InsertionPoint(before)
        with insertion, before.location:
            destination = _insert(piece, destination, offsets)
    return destination


def _new_destination(op):
    """A destination of ``op``'s result type, at the start of its function."""
    entry = op.parent.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry), op.location:
        return _destination(static_tensor_type(op.results[0]))


def concats_to_pieces(module: ir.Module) -> int:
    """Every ``tensor.concat`` -> its pieces (``_leaves``) inserted into one destination,
    each computed in place (``_place``; a piece from outside the kernel copied in).
    Returns how many."""
    count = 0
    for concat in walk_ops(module.operation, {"tensor.concat"}):
        uses = [use.owner.name for use in concat.results[0].uses]
        if concat.parent.name != "func.func" or not uses or set(uses) == {"tensor.concat"}:
            continue  # a concatenation only concatenated again is leaves of the outer one
        rank = static_tensor_type(concat.results[0]).rank
        destination = _place(_leaves(concat.results[0], [0] * rank), _new_destination(concat), concat)
        concat.results[0].replace_all_uses_with(destination)
        count += 1
    for concat in reversed(walk_ops(module.operation, {"tensor.concat"})):
        if not list(concat.results[0].uses):
            concat.erase()
    return count


def _border(low: list, inner: list, outer: list) -> list:
    """(offsets, sizes) of the slabs that cover a padded box's border exactly: per dim
    ``d``, the part before and after the interior along ``d``, over the interior along
    the dims before ``d`` and the whole extent along the dims after it."""
    slabs = []
    for d in range(len(outer)):
        for start, size in ((0, low[d]), (low[d] + inner[d], outer[d] - low[d] - inner[d])):
            if size == 0:
                continue
            offsets = low[:d] + [start] + [0] * (len(outer) - d - 1)
            sizes = inner[:d] + [size] + outer[d + 1:]
            slabs.append((offsets, sizes))
    return slabs


def padded_results(module: ir.Module) -> list:
    """The ``tensor.pad`` ops that ``padded_results_to_pieces`` rewrites: a constant
    padding of a value the kernel computes, that the kernel returns and nothing reads."""
    found = []
    for pad in walk_ops(module.operation, {"tensor.pad"}):
        uses = list(pad.results[0].uses)
        source = pad.operands[0]
        concat = isinstance(source, ir.OpResult) and source.owner.name == "tensor.concat"
        if len(pad.operands) == 1 and (concat or _computing_op(source) is not None) and pad_value(pad) is not None \
                and uses and all(u.owner.name == "func.return" for u in uses):
            found.append(pad)
    return found


def padded_results_to_pieces(module: ir.Module) -> int:
    """Every ``tensor.pad`` that a kernel returns (a MobileNet block's activation padded
    for the next depthwise convolution) of a value it computes -> the value computed in
    place in the interior of the result, and the border filled by element-wise ops of
    its own, one per slab (``_border``): pieces of the result, as a concatenation's,
    where a gather of the computed value would need a dispatch of its own. Returns how
    many."""
    count = 0
    for pad in padded_results(module):
        source = pad.operands[0]
        out = static_tensor_type(pad.results[0])
        low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
        inner = list(static_tensor_type(source).shape)
        constant = pad_value(pad)
        destination = _place(_leaves(source, low), _new_destination(pad), pad)
        with ir.InsertionPoint(pad), pad.location:
            for offsets, sizes in _border(low, inner, list(out.shape)):
                identity = ir.AffineMap.get_identity(out.rank)
                fill = generic([], [identity], [_box(destination, offsets, sizes)],
                               lambda _out: _mlir.arith.constant(out.element_type, constant.attributes["value"]))[0]
                destination = _insert(fill, destination, offsets)
        pad.results[0].replace_all_uses_with(destination)
        pad.erase()
        count += 1
    return count


__all__ = ["concats_to_pieces", "flatten_nested_concats", "padded_results", "padded_results_to_pieces", "split_concat_consumers",
           "split_concat_pads"]
