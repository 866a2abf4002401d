"""Convolutions rewritten into the shapes the CPU micro-kernels take (``conv.py``, ``matmul.py``).

``pad_convolutions`` widens the output width to whole vectors; ``convolutions_to_matmul``
makes a single-image 1x1 convolution, or one of output rows narrower than a vector, a
``linalg.matmul``; ``split_strided_convolutions``
splits a horizontally strided convolution by phase of the input columns, so that its
vector loads are contiguous. ``split_grouped_convolutions``: ``conv_2d_ngchw_gfchw``
has no schedule of its own and would run as scalar loops; it becomes an
``scf.forall`` over the groups whose body is a ``conv_2d_nchw_fchw`` on the group's
slices (the threads share the groups, each group's convolution runs on one), which
then gets the usual padding, strided split and register tiling: a ResNeXt 3x3 layer
of 32 groups of 4 channels ran 1.6x faster than the loops (1x1 grouped convolutions,
ShuffleNet's, become one ``batch_matmul`` instead).
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, generic, make_pad
from ..linalg_queries import accumulator_fill, conv_params, is_f32, linalg_ops, pad_fill, reassociation, static_tensor_type
from .conv import accumulated_convolutions, feeds_accumulated_convolution
from .target import CpuTarget
from .tiles import conv_vector_tile, narrow_conv_rows, peeled_conv_columns

def _grouped_1x1_as_batch_matmul(op, strides):
    """A single-image 1x1 grouped convolution as ``W[G, F, C] @ X[G, C, OH*OW]``: one
    batched micro-kernel whatever the number of groups (ShuffleNet has 3 or 4)."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    x_t, w_t, out_t = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1]), static_tensor_type(op.results[0])
    _, g, c, _, _ = x_t.shape
    f = w_t.shape[1]
    oh, ow = out_t.shape[3:]
    f32 = out_t.element_type
    with ir.InsertionPoint(op), op.location:
        x = op.operands[0]
        if strides != [1, 1] or tuple(x_t.shape[3:]) != (oh, ow):
            x = tensor.extract_slice(
                ir.RankedTensorType.get([1, g, c, oh, ow], f32), x, [], [], [], [0] * 5, [1, g, c, oh, ow], [1, 1, 1, *strides]
            )
        x = tensor.collapse_shape(ir.RankedTensorType.get([g, c, oh * ow], f32), x, reassociation([[0, 1], [2], [3, 4]]))
        w = tensor.collapse_shape(ir.RankedTensorType.get([g, f, c], f32), op.operands[1], reassociation([[0], [1], [2, 3, 4]]))
        init = op.operands[2]
        owner = init.owner if isinstance(init, ir.OpResult) else None
        if owner is not None and owner.name == "linalg.fill":
            c_init = linalg.fill(owner.operands[0], outs=[tensor.empty([g, f, oh * ow], f32)])
        else:
            c_init = tensor.collapse_shape(ir.RankedTensorType.get([g, f, oh * ow], f32), init, reassociation([[0, 1], [2], [3, 4]]))
        product = linalg.batch_matmul(w, x, outs=[c_init])
        return tensor.expand_shape(out_t, product, reassociation([[0, 1], [2], [3, 4]]), [], list(out_t.shape))


def _group_loop(op):
    """A ``conv_2d_ngchw_gfchw`` as an ``scf.forall`` over its groups whose body is one
    ``conv_2d_nchw_fchw`` on the group's slices of the input, the filters and the
    accumulator: one copy of the micro-kernel whatever the number of groups. A filled
    accumulator is filled again in the body, so that the group's convolution starts
    from a fill as a dense one does (``flat_conv_rows`` then takes it: AlexNet's 5x5
    group of 26-wide rows, otherwise padded to 32)."""
    tensor, linalg, scf = _mlir.tensor, _mlir.linalg, _mlir.scf
    x_t, w_t, out_t = (static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0]))
    n, g, c, h, w = x_t.shape
    _, f, _, kh, kw = w_t.shape
    _, _, _, oh, ow = out_t.shape
    strides = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["strides"])]
    dilations = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["dilations"])]
    fill = accumulator_fill(op)
    # Every group's result overwrites its slice: a filled accumulator need not be filled first.
    shared = tensor.empty(list(out_t.shape), out_t.element_type) if fill is not None else op.operands[2]
    loop = scf.ForallOp([0], [g], [1], [shared])
    group, accumulator = loop.regions[0].blocks[0].arguments

    def group_slice(value, shape, dim):
        """Group ``group`` (along ``dim``) of ``value``, without the group dim: the
        slice and its offsets and sizes."""
        offsets = [0] * (len(shape) + 1)
        offsets[dim] = ir.ShapedType.get_dynamic_stride_or_offset()
        sizes = list(shape[:dim]) + [1] + list(shape[dim:])
        result = ir.RankedTensorType.get(list(shape), out_t.element_type)
        return tensor.extract_slice(result, value, [group], [], [], offsets, sizes, [1] * len(sizes)), offsets, sizes

    with ir.InsertionPoint(loop.regions[0].blocks[0]):
        x, _, _ = group_slice(op.operands[0], [n, c, h, w], 1)
        filters, _, _ = group_slice(op.operands[1], [f, c, kh, kw], 0)
        init, offsets, sizes = group_slice(accumulator, [n, f, oh, ow], 1)
        if fill is not None:
            init = linalg.fill(fill.operands[0], outs=[tensor.empty([n, f, oh, ow], out_t.element_type)])
        conv = linalg.conv_2d_nchw_fchw(x, filters, outs=[init], strides=strides, dilations=dilations)
        with ir.InsertionPoint(scf.InParallelOp().region.blocks[0]):
            tensor.parallel_insert_slice(conv, accumulator, [group], [], [], offsets, sizes, [1] * len(sizes))
    return loop.results[0]


def split_grouped_convolutions(module: ir.Module) -> int:
    """Rewrite each f32 ``conv_2d_ngchw_gfchw``: 1x1 ones as a ``batch_matmul`` over
    the groups, others as a loop over the groups (``_group_loop``). Returns how many
    were rewritten."""
    count = 0
    for op in linalg_ops(module):
        if op.name != "linalg.conv_2d_ngchw_gfchw" or len(op.results) != 1:
            continue
        x_t, w_t, out_t = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1]), static_tensor_type(op.results[0])
        if x_t is None or w_t is None or out_t is None or not (is_f32(x_t) and is_f32(w_t) and is_f32(out_t)):
            continue
        with ir.InsertionPoint(op), op.location:
            if (x_t.shape[0], *w_t.shape[3:]) == (1, 1, 1):
                strides = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["strides"])]
                result = _grouped_1x1_as_batch_matmul(op, strides)
            else:
                result = _group_loop(op)
        op.results[0].replace_all_uses_with(result)
        op.erase()
        count += 1
    return count


def _f32_convolutions(module: ir.Module):
    """(op, input type, filter type, output type) of each f32 ``conv_2d_nchw_fchw`` of
    ``module`` with static shapes, found before any is rewritten."""
    for op in linalg_ops(module):
        if op.name != "linalg.conv_2d_nchw_fchw":
            continue
        types = [static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1])]
        types.append(static_tensor_type(op.results[0]) if op.results else None)
        if all(t is not None and is_f32(t) for t in types):
            yield op, *types


def pad_convolutions(module: ir.Module, target: CpuTarget) -> int:
    """Widen each f32 ``conv_2d_nchw_fchw`` to whole vectors along the output width.

    The input gets extra zero columns on the right (merged into its ``tensor.pad``
    when it has one), the convolution computes ``OW'`` columns into a fill of the
    wider shape, and an ``extract_slice`` keeps the first ``OW``. Not those split by
    phase, nor the accumulated ones of a flat row (``flat_conv_rows``), whose last
    column tile is peeled instead (``tiles.peeled_conv_columns``).
    Returns how many convolutions were widened.
    """
    linalg, tensor, arith = _mlir.linalg, _mlir.tensor, _mlir.arith
    count = 0
    for op, x_t, w_t, out_t in _f32_convolutions(module):
        n, f, oh, ow = out_t.shape
        kw = w_t.shape[3]
        _, _, padded = conv_vector_tile(ow, f, target)
        (sh, sw), (dh, dw) = conv_params(op)
        phased = splits_by_phase(sw, dw, kw) or len(accumulated_convolutions(op)) > 1 \
            or feeds_accumulated_convolution(op)
        if padded == ow or (phased and peeled_conv_columns(ow, f, target)):
            continue
        x = op.operands[0]
        need = (padded - 1) * sw + (kw - 1) * dw + 1
        delta = need - x_t.shape[3]
        if delta <= 0:
            continue
        f32 = out_t.element_type
        with ir.InsertionPoint(op), op.location:
            pad_op = x.owner if isinstance(x, ir.OpResult) else None
            if pad_op is not None and pad_op.name == "tensor.pad" and static_pad(pad_op):
                low, high = static_pad(pad_op)
                source = pad_op.operands[0]
                value = pad_value(pad_op)
            else:
                low, high = [0] * 4, [0] * 4
                source, value = x, None
            if value is None:
                value = arith.constant(f32, 0.0)
            high = list(high)
            high[3] += delta
            new_x = make_pad(source, low, high, value)
            init = op.operands[2]
            init_op = init.owner if isinstance(init, ir.OpResult) else None
            broadcast_dims = _dense_i64(init_op, "dimensions") if init_op is not None else None
            if init_op is not None and init_op.name == "linalg.fill":
                empty = tensor.empty([n, f, oh, padded], f32)
                new_init = linalg.fill(init_op.operands[0], outs=[empty])
            elif init_op is not None and init_op.name == "linalg.broadcast" and 3 in (broadcast_dims or []):
                # a bias broadcast over the width: broadcast into the wider shape
                empty = tensor.empty([n, f, oh, padded], f32)
                new_init = linalg.broadcast(init_op.operands[0], outs=[empty], dimensions=broadcast_dims).result
            else:
                new_init = make_pad(init, [0] * 4, [0, 0, 0, padded - ow], arith.constant(f32, 0.0))
            conv = linalg.conv_2d_nchw_fchw(new_x, op.operands[1], outs=[new_init], strides=[sh, sw], dilations=[dh, dw])
            sliced = tensor.extract_slice(out_t, conv, [], [], [], [0, 0, 0, 0], [n, f, oh, ow], [1, 1, 1, 1])
        op.results[0].replace_all_uses_with(sliced)
        op.erase()
        for dead in (init_op, pad_op):
            if dead is not None and all(len(list(r.uses)) == 0 for r in dead.results):
                dead.erase()
        count += 1
    return count


def _patch_columns(op, x_t, out_t):
    """The input of a single-image convolution ``op`` as the matrix ``X[C*KH*KW, OH*OW]``
    of its patches (im2col): a 1x1 one's (strided) input collapsed, a larger window's
    taps gathered by a ``linalg.generic`` (its input already padded)."""
    tensor = _mlir.tensor
    _, f, oh, ow = out_t.shape
    _, c, kh, kw = static_tensor_type(op.operands[1]).shape
    (sh, sw), (dh, dw) = conv_params(op)
    f32 = out_t.element_type
    x = op.operands[0]
    if (kh, kw) == (1, 1):
        if (sh, sw) != (1, 1) or tuple(x_t.shape[2:]) != (oh, ow):
            sliced = ir.RankedTensorType.get([1, c, oh, ow], f32)
            x = tensor.extract_slice(sliced, x, [], [], [], [0, 0, 0, 0], [1, c, oh, ow], [1, 1, sh, sw])
        return tensor.collapse_shape(ir.RankedTensorType.get([c, oh * ow], f32), x, reassociation([[0, 1], [2, 3]]))
    d = [ir.AffineDimExpr.get(i) for i in range(5)]  # (c, i, j, y, x): tap (i, j) of output (y, x)
    read = affine_map(5, [ir.AffineConstantExpr.get(0), d[0], d[3] * sh + d[1] * dh, d[4] * sw + d[2] * dw])
    (patches,) = generic([x], [read, affine_map(5, range(5))], [tensor.empty([c, kh, kw, oh, ow], f32)],
                         lambda value, _: value)
    return tensor.collapse_shape(ir.RankedTensorType.get([c * kh * kw, oh * ow], f32), patches,
                                 reassociation([[0, 1, 2], [3, 4]]))


def convolutions_to_matmul(module: ir.Module, target: CpuTarget) -> int:
    """Rewrite single-image ``conv_2d_nchw_fchw`` (f32) as ``linalg.matmul``
    ``W[F, C*KH*KW] @ X[C*KH*KW, OH*OW]`` (``_patch_columns``): the 1x1 ones (the matmul
    micro-kernel with B packing instead of a convolution that reads a new input plane
    at every step) and those whose output rows are narrower than one vector register
    (``conv_vector_tile``), whose direct kernel would compute padded columns: a
    YOLOv8 head's 3x3 convolutions on 3x4 and 6x8 outputs ran 2 to 3.5 times faster
    as a matmul. Returns how many convolutions were rewritten.
    """
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op, x_t, w_t, out_t in _f32_convolutions(module):
        n, f, oh, ow = out_t.shape
        _, c, kh, kw = w_t.shape
        narrow = narrow_conv_rows(ow, f, target)
        if n != 1 or ((kh, kw) != (1, 1) and not narrow):
            continue
        f32 = out_t.element_type
        with ir.InsertionPoint(op), op.location:
            xm = _patch_columns(op, x_t, out_t)
            wm = tensor.collapse_shape(ir.RankedTensorType.get([f, c * kh * kw], f32), op.operands[1],
                                       reassociation([[0], [1, 2, 3]]))
            init = op.operands[2]
            init_op = init.owner if isinstance(init, ir.OpResult) else None
            if init_op is not None and init_op.name == "linalg.fill":
                new_init = linalg.fill(init_op.operands[0], outs=[tensor.empty([f, oh * ow], f32)])
            else:
                new_init = tensor.collapse_shape(ir.RankedTensorType.get([f, oh * ow], f32), init, reassociation([[0, 1], [2, 3]]))
            mm = linalg.matmul(wm, xm, outs=[new_init])
            y = tensor.expand_shape(out_t, mm, reassociation([[0, 1], [2, 3]]), [], [1, f, oh, ow])
        op.results[0].replace_all_uses_with(y)
        op.erase()
        if init_op is not None and all(len(list(r.uses)) == 0 for r in init_op.results):
            init_op.erase()
        count += 1
    return count


def split_strided_convolutions(module: ir.Module) -> int:
    """A ``conv_2d_nchw_fchw`` with horizontal stride S > 1 -> S convolutions of
    horizontal stride 1, one per phase of the input columns.

    Phase p reads the columns ``S*w + p`` with the filter taps ``kw = p, p + S, ...``;
    the phases accumulate into the same result (the first one into the original init).
    Vector loads along the output width are then contiguous instead of gathers. The
    phases are copied once, all together (``phase_split``), not each by a copy of a
    strided slice, which the vectorizer lowers to one masked element at a time through
    the stack (the transposing copy, in whole rows, measured 0.71-0.92 of that time on
    224x224 images' first layers, 0.67-0.82 on smaller planes; AVX-512 and AVX2, 1
    thread). Returns how many convolutions were split.
    """
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op, x_t, w_t, out_t in _f32_convolutions(module):
        (sh, sw), (dh, dw) = conv_params(op)
        n, f, oh, ow = out_t.shape
        _, c, kh, kw = w_t.shape
        if not splits_by_phase(sw, dw, kw):
            continue
        f32 = out_t.element_type
        h = x_t.shape[2]
        result = op.operands[2]
        with ir.InsertionPoint(op), op.location:
            widest = ow + len(range(0, kw, sw)) - 1
            padded = padded_phases(op.operands[0], widest) if sw == 2 else None
            phases, row = padded if padded is not None else (phase_split(op.operands[0], sw, widest), lambda p: p)
            for phase in range(min(sw, kw)):
                taps = len(range(phase, kw, sw))
                width = ow + taps - 1
                sliced_t = ir.RankedTensorType.get([n, c, h, width], f32)
                x_phase = tensor.extract_slice(sliced_t, phases, [], [], [], [0, 0, 0, row(phase), 0],
                                               [n, c, h, 1, width], [1, 1, 1, 1, 1])
                w_phase_t = ir.RankedTensorType.get([f, c, kh, taps], f32)
                w_phase = tensor.extract_slice(w_phase_t, op.operands[1], [], [], [], [0, 0, 0, phase], [f, c, kh, taps], [1, 1, 1, sw])
                result = linalg.conv_2d_nchw_fchw(x_phase, w_phase, outs=[result], strides=[sh, 1], dilations=[dh, 1])
        pad_op = op.operands[0].owner if isinstance(op.operands[0], ir.OpResult) else None
        op.results[0].replace_all_uses_with(result)
        op.erase()
        if padded is not None and not list(pad_op.results[0].uses):
            pad_op.erase()
        count += 1
    return count


def splits_by_phase(sw: int, dw: int, kw: int) -> bool:
    """Whether ``split_strided_convolutions`` splits a convolution of horizontal stride
    ``sw``, dilation ``dw`` and window width ``kw`` by phase."""
    return sw > 1 and dw == 1 and kw > 1


def static_pad(pad_op):
    """(low, high) of a tensor.pad whose amounts are all static, else None."""
    low = _dense_i64(pad_op, "static_low")
    high = _dense_i64(pad_op, "static_high")
    if low is None or high is None or any(v == ir.ShapedType.get_dynamic_size() for v in low + high):
        return None
    return low, high


def _dense_i64(op, name):
    if name not in op.attributes:
        return None
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def pad_value(pad_op):
    """The padding value of a tensor.pad when it is defined outside its region."""
    block = pad_op.regions[0].blocks[0]
    terminator = list(block.operations)[-1]
    value = terminator.operands[0]
    if isinstance(value, ir.BlockArgument) and value.owner == block:
        return None
    if isinstance(value, ir.OpResult) and value.owner.parent == pad_op:
        return None
    return value


def phase_split(x, stride: int, width: int, init=None):
    """``[N, C, H, stride, width]``: phase p of ``x``'s columns (``stride * w + p``) at
    ``[:, :, :, p]``, contiguous (written into ``init`` when given). ``x`` (zero-padded
    or cut to ``stride * width`` columns) is viewed as ``[N, C, H, width, stride]`` and
    transposed by an element-wise generic whose vectors hold whole ``[stride, width]``
    tiles (``rows.py``): contiguous loads and register shuffles, not a load per lane."""
    tensor, arith = _mlir.tensor, _mlir.arith
    x_t = static_tensor_type(x)
    n, c, h, w = x_t.shape
    f32 = x_t.element_type
    columns = stride * width
    if w < columns:
        x = make_pad(x, [0] * 4, [0, 0, 0, columns - w], arith.constant(f32, 0.0))
    elif w > columns:
        x = tensor.extract_slice(ir.RankedTensorType.get([n, c, h, columns], f32), x, [], [], [], [0] * 4,
                                 [n, c, h, columns], [1] * 4)
    pairs = tensor.expand_shape(ir.RankedTensorType.get([n, c, h, width, stride], f32), x,
                                reassociation([[0], [1], [2], [3, 4]]), [], [n, c, h, width, stride])
    dims = [ir.AffineDimExpr.get(d) for d in range(5)]
    read = ir.AffineMap.get(5, 0, [dims[0], dims[1], dims[2], dims[4], dims[3]])
    init = init if init is not None else tensor.empty([n, c, h, stride, width], f32)
    return generic([pairs], [read, ir.AffineMap.get_identity(5)], [init], lambda value, _: value)[0]


def padded_phases(x: ir.Value, width: int):
    """``(phases, row)`` for the stride-2 column phases ``[N, C, H, 2, width]`` of ``x``
    when it is a zero ``tensor.pad`` of an f32 image of even width padded only along
    its rows and columns (phase ``p`` is ``phases[:, :, :, row(p)]``), else None.

    Split from the padded input (``phase_split``), the image was copied twice: into the
    padded input (materialized whole before the convolution), then into the phases.
    Here the image's own phases are written into the interior of a zeroed buffer by the
    one transposing copy: padded phase ``p`` column ``w`` is image column ``2w + p - L``
    (``L`` the left padding), so image phase ``q`` lands in padded phase ``(q + L) % 2``
    from column ``L // 2 + q * (L % 2)``. Written with ``width + L % 2`` floats from one
    phase row to the next, both image phases start at one column of a single view; the
    convolutions read the same rows through a ``[2, width]`` view."""
    pad_op = x.owner if isinstance(x, ir.OpResult) else None
    if pad_op is None or pad_op.name != "tensor.pad" or pad_fill(pad_op) != 0.0:
        return None
    amounts = static_pad(pad_op)
    image_t = static_tensor_type(pad_op.operands[0])
    if amounts is None or image_t is None or not is_f32(image_t) or any(amounts[0][:2] + amounts[1][:2]):
        return None
    n, c, h, w = image_t.shape
    top, left = amounts[0][2], amounts[0][3]
    pairs = min(w // 2, width - left // 2)
    if w % 2 or pairs <= 0:
        return None
    tensor, linalg, arith = _mlir.tensor, _mlir.linalg, _mlir.arith
    f32 = image_t.element_type
    rows = ir.RankedTensorType(x.type).shape[2]
    step = width + left % 2  # floats from one phase row to the next, as written
    zero = arith.constant(f32, 0.0)
    flat = linalg.fill(zero, outs=[tensor.empty([n, c, rows, 2 * step], f32)])
    by_phase = [[0], [1], [2], [3, 4]]
    written_t = ir.RankedTensorType.get([n, c, rows, 2, step], f32)
    written = tensor.expand_shape(written_t, flat, reassociation(by_phase), [], written_t.shape)
    offsets, sizes = [0, 0, top, 0, left // 2], [n, c, h, 2, pairs]
    interior_t = ir.RankedTensorType.get(sizes, f32)
    interior = tensor.extract_slice(interior_t, written, [], [], [], offsets, sizes, [1] * 5)
    image = phase_split(pad_op.operands[0], 2, pairs, init=interior)
    written = tensor.insert_slice(image, written, [], [], [], offsets, sizes, [1] * 5)
    flat = tensor.collapse_shape(ir.RankedTensorType.get([n, c, rows, 2 * step], f32), written,
                                 reassociation(by_phase))
    if step != width:
        flat = tensor.extract_slice(ir.RankedTensorType.get([n, c, rows, 2 * width], f32), flat, [], [], [],
                                    [0] * 4, [n, c, rows, 2 * width], [1] * 4)
    phases_t = ir.RankedTensorType.get([n, c, rows, 2, width], f32)
    phases = tensor.expand_shape(phases_t, flat, reassociation(by_phase), [], phases_t.shape)
    return phases, lambda phase: (phase - left) % 2


__all__ = ["convolutions_to_matmul", "pad_convolutions", "pad_value", "phase_split", "static_pad", "split_grouped_convolutions",
           "split_strided_convolutions", "splits_by_phase"]
