"""Grouped convolutions of few channels per group: per group, its input padded once in
the first-level cache and one register-tiled generic over the window's taps.

A ``conv_2d_ngchw_gfchw`` of a ResNeXt (32 groups of 4 or 8 channels, 3x3) run as a
loop over the groups of tiny dense convolutions reached 15-35% of the FMA peak: each
group's register tile was its 4 or 8 output channels by one row, and the input was
padded whole, a pass over memory of its own. ``grouped_taps`` rewrites it as::

    scf.forall over the groups                   (what the threads share)
      plane = fill(0) ; plane[pads] = x[:, g]    (the group's Cg channels, in L1)
      acc[f, oh, ow] += sum over c, (i, j) of plane[c, sh*oh + dh*i, sw*ow + dw*j] * w[g, f, c, i, j]
      y[:, g] = epilogue(acc)                    (bias, ReLU: in registers)

where the sum is one ``linalg.generic`` (marked ``MARK``) over ``[N, 1, Cg, Fg, OH,
OW']`` whose KH x KW inputs are the taps, slices of the plane read along every input
channel, and the weight slices ``w[g, :, :, i, j]``; the input channels are its
reduction loop. ``schedule_grouped`` tiles it to ``[1, 1, -, FR, R, WV]`` (the group's
output channels times R rows of WV columns: every tap vector feeds FR FMAs, every
weight broadcast R * WV / lanes of them), the channels a loop inside the tile. OW' is
the output width rounded up to whole tiles; a horizontally strided convolution reads
rows of taps with a stride of 2 (``strided_reads``: a contiguous read and a shuffle).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, copy_into, generic, insert_at, make_pad, slice_at, split_offsets, with_operands
from ..kernel_plan import OpSchedule
from ..linalg_queries import (conv_params, elementwise_consumer, indexing_maps, is_f32, linalg_inputs, linalg_ops, only_user,
                              pad_fill, producer, reassociation, reassociation_groups, static_tensor_type)
from .cpu_planner import CpuPlanner
from .depthwise import channel_block, filled
from .tiles import largest_divisor

MARK = "dnnf.grouped_taps"  # unit attribute on the taps generic
# Input channels per group up to which ``grouped_taps`` applies; wider groups keep the
# loop of dense convolutions. Measured (AVX-512, one thread, kernels in context): 16
# channels per group took 0.81-0.85 of the dense loop's time, 32 0.95-0.98 and 48 (5x5,
# two groups) about the same: no reason to leave the dense kernel there.
MAX_GROUP_CHANNELS = 16


def _register_tile(fg: int, oh: int, ow: int, strided: bool, target) -> tuple:
    """(FR output channels, R rows, WV columns) of the register tile: WV one or two
    vectors (one when it covers the row), FR * R * WV / lanes accumulators within three
    quarters of the vector registers. A horizontally strided convolution takes one row:
    its taps are then rows that ``strided_reads`` reads contiguously."""
    lanes = target.lanes(32)
    wv = lanes if ow <= lanes else 2 * lanes
    budget = max(1, target.vector_registers * 3 // 4 // (wv // lanes))
    fr = largest_divisor(fg, range(min(fg, budget), 0, -1))
    rows = 1 if strided else largest_divisor(oh, range(max(1, budget // fr), 0, -1))
    return fr, rows, wv


def _pads(x):
    """(source, low, high) of the zero ``tensor.pad`` of the image dims producing ``x``
    (``[N, G, Cg, H, W]``), or (``x``, zeros, zeros)."""
    pad = producer(x)
    if pad is None or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return x, [0] * 5, [0] * 5
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if pad_fill(pad) != 0.0 or ir.ShapedType.get_dynamic_stride_or_offset() in low + high or any(low[:3] + high[:3]):
        return x, [0] * 5, [0] * 5
    return pad.operands[0], low, high


def _plane(op, width: int):
    """A zero plane ``[N, 1, Cg, H', W']`` for a group of ``op``'s input padded, at least
    ``width`` columns wide; its source, and the offset of the group's channels in it."""
    source, low, high = _pads(op.operands[0])
    n, _, cg, h, w = static_tensor_type(source).shape
    f32 = static_tensor_type(source).element_type
    plane = filled([n, 1, cg, h + low[3] + high[3], max(w + low[4] + high[4], width)], 0.0, f32)
    return plane, source, [0, 0, 0, low[3], low[4]]


def _group_plane(plane, source, offsets, group):
    """``plane`` with group ``group`` of ``source`` copied in at ``offsets`` (its border
    is left as it is: zeros)."""
    n, _, cg, h, w = static_tensor_type(source).shape
    copied = copy_into(slice_at(source, [0, group, 0, 0, 0], [n, 1, cg, h, w]), slice_at(plane, offsets, [n, 1, cg, h, w]))
    return insert_at(copied, plane, offsets)


def _group_init(op, group, width: int):
    """The accumulator of group ``group``, ``[N, 1, Fg, OH, width]``: the convolution's
    fill refilled, or its group's slice zero-padded on the right."""
    init = op.operands[2]
    n, _, fg, oh, ow = static_tensor_type(init).shape
    f32 = static_tensor_type(init).element_type
    fill = producer(init)
    if fill is not None and fill.name == "linalg.fill":
        return filled([n, 1, fg, oh, width], fill.operands[0], f32)
    start = slice_at(init, [0, group, 0, 0, 0], [n, 1, fg, oh, ow])
    if width == ow:
        return start
    return make_pad(start, [0] * 5, [0, 0, 0, 0, width - ow], _mlir.arith.constant(f32, 0.0))


def _taps_generic(op, group, plane, width: int):
    """Group ``group``'s sum over its taps (the marked generic, see the module docstring)
    over ``width`` output columns, its input padded in ``plane``."""
    math_ = _mlir.math
    _, fg, cg, kh, kw = static_tensor_type(op.operands[1]).shape
    n, _, _, oh, _ = static_tensor_type(op.results[0]).shape
    (sh, sw), (dh, dw) = conv_params(op)
    weights = slice_at(op.operands[1], [group, 0, 0, 0, 0], [1, fg, cg, kh, kw])
    f32 = static_tensor_type(plane).element_type
    tap_t, weight_t = ir.RankedTensorType.get([n, 1, cg, oh, width], f32), ir.RankedTensorType.get([1, fg, cg], f32)
    d = [ir.AffineDimExpr.get(k) for k in range(6)]  # (n, g, c, f, oh, ow)
    tap_map, weight_map = affine_map(6, [d[0], d[1], d[2], d[4], d[5]]), affine_map(6, [d[1], d[3], d[2]])
    inputs, maps = [], []
    for i in range(kh):
        for j in range(kw):
            inputs.append(_mlir.tensor.extract_slice(tap_t, plane, [], [], [], [0, 0, 0, i * dh, j * dw],
                                                     [n, 1, cg, oh, width], [1, 1, 1, sh, sw]))
            inputs.append(_mlir.tensor.extract_slice(weight_t, weights, [], [], [], [0, 0, 0, i, j], [1, fg, cg, 1, 1],
                                                     [1] * 5))
            maps += [tap_map, weight_map]

    def body(*scalars):
        acc = scalars[-1]
        for t in range(0, len(scalars) - 1, 2):
            acc = math_.fma(scalars[t], scalars[t + 1], acc)
        return acc

    out_map = affine_map(6, [d[0], d[1], d[3], d[4], d[5]])
    iterators = ["parallel", "parallel", "reduction", "parallel", "parallel", "parallel"]
    result = generic(inputs, maps + [out_map], [_group_init(op, group, width)], body, iterators)[0]
    result.owner.attributes[MARK] = ir.UnitAttr.get()
    return result


def _grouped_operand(value, amap, group, channels: int):
    """(value, map) reading an operand of an epilogue over ``[N, F, OH, OW]`` (``amap``)
    over group ``group``'s ``[N, 1, Fg, OH, OW']`` instead: its dim read along F (if
    any) cut to the group's ``channels``, the other dims renumbered."""
    d = [ir.AffineDimExpr.get(k) for k in range(5)]
    shape = list(static_tensor_type(value).shape)
    offsets, sizes, results = [0] * len(shape), list(shape), []
    for position, expr in enumerate(amap.results):
        if not isinstance(expr, ir.AffineDimExpr):
            results.append(expr)
            continue
        dim = ir.AffineDimExpr(expr).position
        if dim == 1:
            offsets[position] = _mlir.arith.muli(group, _mlir.arith.constant(ir.IndexType.get(), channels))
            sizes[position] = channels
        results.append(d[{0: 0, 1: 2, 2: 3, 3: 4}[dim]])
    if sizes != shape:
        value = slice_at(value, offsets, sizes)
    return value, affine_map(5, results)


def _grouped_epilogue(op):
    """The element-wise consumer of the grouped convolution ``op`` (read through the
    collapse of its groups) that its tiles can compute too: one whose other operands
    do not vary along the width (a bias), or None."""
    collapse = only_user(op.results[0])
    if collapse is None or collapse.name != "tensor.collapse_shape" or reassociation_groups(collapse) != [[0], [1, 2], [3], [4]]:
        return None
    consumer = elementwise_consumer(collapse)
    if consumer is None:
        return None
    others = [amap for value, amap in zip(linalg_inputs(consumer), indexing_maps(consumer)) if value != collapse.results[0]]
    if any(isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == 3 for amap in others for e in amap.results):
        return None
    return consumer


def _group_epilogue(consumer, convolution, group, acc):
    """The element-wise ``consumer`` of ``convolution``'s collapsed result rebuilt over
    group ``group``'s accumulator ``acc`` (``[N, 1, Fg, OH, OW']``)."""
    acc_t = static_tensor_type(acc)
    collapsed = only_user(convolution.results[0]).results[0]
    inputs, maps = [], []
    for value, amap in zip(linalg_inputs(consumer), indexing_maps(consumer)):
        operand = (acc, ir.AffineMap.get_identity(5)) if value == collapsed else \
            _grouped_operand(value, amap, group, acc_t.shape[2])
        inputs.append(operand[0])
        maps.append(operand[1])
    init = _mlir.tensor.empty(list(acc_t.shape), static_tensor_type(consumer.results[0]).element_type)
    return with_operands(consumer, inputs, maps + [ir.AffineMap.get_identity(5)], [init], ["parallel"] * 5)[0]


def _plane_width(op, width: int) -> int:
    """Columns of input that ``width`` output columns of ``op`` read."""
    (_, sw), (_, dw) = conv_params(op)
    return (width - 1) * sw + (static_tensor_type(op.operands[1]).shape[4] - 1) * dw + 1


def _group_loop(op, epilogue, target):
    """The rewrite of the grouped convolution ``op`` and its ``epilogue`` (or None): the
    value that replaces the epilogue's (or the convolution's) result. Blocks of groups
    are what the threads share; within a block, the groups are a loop whose plane is
    filled once (each group overwrites its interior only)."""
    tensor, scf, arith = _mlir.tensor, _mlir.scf, _mlir.arith
    n, g, fg, oh, ow = static_tensor_type(op.results[0]).shape
    (_, sw), _ = conv_params(op)
    wv = _register_tile(fg, oh, ow, sw > 1, target)[2]
    width = math.ceil(ow / wv) * wv
    root = epilogue if epilogue is not None else op
    f32 = static_tensor_type(root.results[0]).element_type
    block = channel_block(g)
    index = ir.IndexType.get()
    outer = scf.ForallOp([0], [g // block], [1], [tensor.empty([n, g, fg, oh, ow], f32)])
    b, shared = outer.regions[0].blocks[0].arguments
    with ir.InsertionPoint(outer.regions[0].blocks[0]):
        first = arith.muli(b, arith.constant(index, block))
        plane, source, offsets = _plane(op, _plane_width(op, width))
        start = slice_at(shared, [0, first, 0, 0, 0], [n, block, fg, oh, ow])
        inner = scf.ForOp(arith.constant(index, 0), arith.constant(index, block), arith.constant(index, 1), [start, plane])
        with ir.InsertionPoint(inner.body):
            local, (out, plane) = inner.induction_variable, inner.inner_iter_args
            group = arith.addi(first, local)
            plane = _group_plane(plane, source, offsets, group)
            y = _taps_generic(op, group, plane, width)
            if epilogue is not None:
                y = _group_epilogue(epilogue, op, group, y)
            if width != ow:
                y = slice_at(y, [0] * 5, [n, 1, fg, oh, ow])
            scf.YieldOp([insert_at(y, out, [0, local, 0, 0, 0]), plane])
        with ir.InsertionPoint(scf.InParallelOp().region.blocks[0]):
            values, static = split_offsets([0, first, 0, 0, 0])
            tensor.parallel_insert_slice(inner.results[0], shared, values, [], [], static, [n, block, fg, oh, ow], [1] * 5)
    if epilogue is None:
        return outer.results[0]
    return tensor.collapse_shape(static_tensor_type(epilogue.results[0]), outer.results[0],
                                 reassociation([[0], [1, 2], [3], [4]]))


def _takes_grouped_taps(op) -> bool:
    """Whether the grouped convolution ``op`` (f32, static) becomes the taps generic:
    few channels per group (``MAX_GROUP_CHANNELS``), and not a single image's 1x1 one
    (ShuffleNet's: one batched matmul, ``convolutions.split_grouped_convolutions``)."""
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or not is_f32(t) for t in types):
        return False
    return types[1].shape[2] <= MAX_GROUP_CHANNELS and (types[0].shape[0], *types[1].shape[3:]) != (1, 1, 1)


def grouped_taps(module: ir.Module, target) -> int:
    """Rewrite every grouped convolution ``_takes_grouped_taps`` accepts (see the module
    docstring). Returns how many were rewritten."""
    count = 0
    for op in linalg_ops(module):
        if op.name != "linalg.conv_2d_ngchw_gfchw" or len(op.results) != 1 or not _takes_grouped_taps(op):
            continue
        epilogue = _grouped_epilogue(op)
        root = epilogue if epilogue is not None else op
        collapse = only_user(op.results[0]) if epilogue is not None else None
        with ir.InsertionPoint(root), root.location:
            result = _group_loop(op, epilogue, target)
        root.results[0].replace_all_uses_with(result)
        for dead in (epilogue, collapse, op):
            if dead is not None:
                dead.erase()
        count += 1
    return count


def grouped_fill(op):
    """The ``linalg.fill`` initializing the accumulator of ``grouped_taps``'s generic
    ``op``, if one does (fused into its register tiles)."""
    init = producer(op.operands[len(op.operands) - 1])
    return init if init is not None and init.name == "linalg.fill" else None


def _tap_stride(op) -> int:
    """The column stride of the taps that ``grouped_taps``'s generic ``op`` reads."""
    return list(ir.DenseI64ArrayAttr(producer(op.operands[0]).attributes["static_strides"]))[-1]


def schedule_grouped(planner: CpuPlanner, op):
    """The register tile of ``grouped_taps``'s generic (``_register_tile``, on
    one thread: the loop over the groups is what the threads share), its fill and its
    element-wise consumer (the epilogue) fused in, the input channels a loop inside
    it. Returns the epilogue scheduled with it, or None."""
    s = planner.script
    n, g, fg, oh, ow = static_tensor_type(op.results[0]).shape
    fr, rows, wv = _register_tile(fg, oh, ow, _tap_stride(op) > 1, planner.target)
    tag = planner.new_tag(op)
    epilogue = elementwise_consumer(op)
    details = dict(register_tile=(fr, rows, wv))
    if epilogue is None:
        root, sizes = s.match([op.name], tag=tag), [1, 1, 0, fr, rows, wv]
    else:
        etag = planner.new_tag(epilogue)
        planner.strategies[etag] = "epilogue"
        details["epilogue"] = etag
        root, sizes = s.match([epilogue.name], tag=etag), [1, 1, fr, rows, wv]
    _, loops = s.fuse(root, sizes)
    s.tile_for(s.match([op.name], tag=tag, within=loops[0]), [0, 0, 1, 0, 0, 0])
    # One input channel per step: its unit loops folded away, the step is element-wise
    # (the chain of FMAs from the accumulator, which the vectorizer takes; as a
    # reduction it would want a single combining op). Transfers are not folded into
    # their slices' sources: the accumulator's read and write stay on one slice of
    # the channel loop's tile, a pair that the cleanup hoists out of the loop.
    s.patterns(loops[0], ["linalg.fold_unit_extent_dims_via_slices", "canonicalization"])
    s.vectorize(s.match(["linalg.generic"], within=loops[0]))
    planner.vectorize_fills(s.match(["linalg.fill"], within=loops[0]))
    s.patterns(loops[0], ["vector.transfer_permutation_patterns", "canonicalization"])
    planner.cleanup()
    planner.add_schedule(OpSchedule(tag, op.name, (n, g, fg, oh, ow), "grouped", details))
    return epilogue


__all__ = ["MARK", "MAX_GROUP_CHANNELS", "grouped_fill", "grouped_taps", "schedule_grouped"]
