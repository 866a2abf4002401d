"""Depthwise convolutions and pooling as a loop over channels, each padded in a small buffer.

The convolution's input arrives zero-padded by a ``tensor.pad`` of the whole tensor
and its bias and activation come as an element-wise consumer. Scheduled as they come,
the pad is a pass of its own over a copy of the input (a fill of the whole padded
tensor, then a copy of the input into it), the taps a second and the epilogue a
third: on MobileNetV2's 144x56x56 layer, three passes over 1.8 MB where one reads the
input and one writes the output. ``depthwise_channel_loops`` rewrites each f32 static
``depthwise_conv_2d_nchw_chw`` as::

    scf.forall over blocks of channels          (what the threads share)
      plane = fill(pad value)                   (once per block: the border never changes)
      scf.for over the block's channels
        plane[pads] = x[:, c]                   (one channel, in L1)
        y[:, c] = epilogue(depthwise(plane, w[c]))

so that the padded plane stays in the first-level cache and is reused by every
channel of the block (carried by the ``scf.for``, filled once), and the epilogue
(``windows.taken_epilogue``: a cheap one, bias, ReLU6, a residual add) is computed on
each channel's taps in registers: one generic (``windows.window_generic``) per channel.

Max and sum pooling (average pooling's sum) over rows at least a vector wide take the
same loop, their plane padded with the pool's value (the lowest float for max): the
whole-tensor pad and phase split they had cost a copy of the input in memory each
(measured, AVX-512, one thread, per-kernel profile: Inception v2's 192x56x56 3x3/2
max pool padded at the end 0.40 -> 0.134 ms, ResNet-50's 64x112x112 3x3/2 padded
0.26 -> 0.185 ms, VGG-19's 64x224x224 2x2/2 1.6 -> 0.8-1.1 ms). Pools whose window
separates (``separable_pools.takes_separable``) take two passes per channel instead,
its rows and then its columns, with no copy of the plane.
"""

from __future__ import annotations

from math import prod

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import copy_into, insert_at, slice_at, split_offsets
from ..linalg_queries import (conv_params, indexing_maps, is_f32, linalg_init, linalg_inputs, linalg_ops, producer,
                              static_tensor_type)
from .convolutions import phase_split
from .separable_pools import separable_pool, takes_separable
from .strided_reads import reads_contiguously
from .windows import DEPTHWISE, MAX_TAPS, POOLING, phase_width, replace_window, taken_epilogue, tap_slices, window_generic, window_of

CHANNEL_LOOP_OPS = {DEPTHWISE, *POOLING}
MAX_BLOCKS = 16
LOOPED_COLUMNS = 8  # a padded depthwise convolution's narrowest rows in the loop (_narrow_rows_looped)
ROW_VECTORS = 4  # registers a row's vector takes at most (rows.schedule_rows): one row, one read  # channel blocks of the parallel loop: enough for the threads, few buffers


def channel_block(channels: int) -> int:
    """Channels per block: the smallest divisor of ``channels`` that leaves at most
    ``MAX_BLOCKS`` blocks (equal blocks: static slices in every thread)."""
    return next(d for d in range(1, channels + 1) if channels % d == 0 and channels // d <= MAX_BLOCKS)


def static_pad(op):
    """(source, low, high, padding value) of the ``tensor.pad`` producing ``op``'s input
    when it pads only the two image dims, by static amounts, with a constant (a float)
    or a value defined outside its region; else (input, zeros, zeros, 0.0)."""
    x = op.operands[0]
    unpadded = x, [0] * 4, [0] * 4, 0.0  # columns added for whole phases are never read
    pad = producer(x)
    if pad is None or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return unpadded
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if ir.ShapedType.get_dynamic_stride_or_offset() in low + high or any(low[:2] + high[:2]):
        return unpadded
    block = pad.regions[0].blocks[0]
    value = list(block.operations)[-1].operands[0]
    definer = producer(value)
    if definer is not None and definer.name == "arith.constant":
        return pad.operands[0], low, high, ir.FloatAttr(definer.attributes["value"]).value
    if isinstance(value, ir.BlockArgument) or definer is not None and definer.parent.operation == pad.operation:
        return unpadded
    return pad.operands[0], low, high, value


def _channel_slice(value, amap, channel):
    """The slice of an epilogue operand read through ``amap`` (a broadcast map) that one
    output channel (loop dim 1) reads."""
    shape = static_tensor_type(value).shape
    offsets, sizes = [0] * len(shape), list(shape)
    for position, expr in enumerate(amap.results):
        if isinstance(expr, ir.AffineDimExpr) and ir.AffineDimExpr(expr).position == 1:
            offsets[position], sizes[position] = channel, 1
    return slice_at(value, offsets, sizes)


def filled(shape: list, value, element):
    """A tensor of ``shape`` filled with ``value`` (a float or an f32 value)."""
    tensor, linalg, arith = _mlir.tensor, _mlir.linalg, _mlir.arith
    if not isinstance(value, ir.Value):
        value = arith.constant(element, value)
    return linalg.fill(value, outs=[tensor.empty(shape, element)])


def _padded_plane(source, channel, low, high, plane):
    """Channel ``channel`` of ``source`` copied into the interior of ``plane``, a buffer
    already filled with the padding value (``_scratch``)."""
    n, _, h, w = static_tensor_type(source).shape
    inner = slice_at(plane, [0, 0, low[2], low[3]], [n, 1, h, w])
    copied = copy_into(slice_at(source, [0, channel, 0, 0], [n, 1, h, w]), inner)
    return insert_at(copied, plane, [0, 0, low[2], low[3]])


def _scratch(op, source, pad, lanes: int):
    """How one channel's taps read ``source`` (padded by ``pad``): (kind, shape of the
    buffer they read, whether every element of it is written per channel) with kind
    "input" (in place, no buffer), "plane" (a padded plane), "plane-phases" (a padded
    plane, then its column phases) or "phases" (the phases written straight from the
    input). The buffer is filled with the padding value once per block of channels,
    before their loop: its border is the same for every channel and each channel
    overwrites its interior. Filled per channel, its stores cost as much as the taps'
    (a 512-bit store takes two cycles on Zen 4): MobileNetV2's 32x48x48 3x3 padded by
    the convolution took 1.6x the time of the same taps over an input padded by its
    producer."""
    low, high, _ = pad
    n, _, h, w = static_tensor_type(source).shape
    ow = static_tensor_type(op.results[0]).shape[3]
    window = window_of(op)
    strides, dilations = conv_params(op)
    sw, dw = strides[1], dilations[1]
    padded = [n, 1, h + low[2] + high[2], w + low[3] + high[3]]
    in_place = op.name in POOLING and not any(low + high) and ow <= ROW_VECTORS * lanes and reads_contiguously(sw, ow)
    if sw == 1 or ow <= lanes or in_place:
        return ("plane", padded, False) if any(low + high) else ("input", None, True)
    if w % sw:
        return "plane-phases", padded[:3] + [max(padded[3], sw * phase_width(window[1], sw, dw, ow))], False
    shift = -low[3] % sw
    first = (low[3] + shift) // sw
    width = max(phase_width(window[1], sw, dw, ow, shift), first + w // sw)
    return "phases", [n, 1, padded[2], sw, width], not any(low + high) and width == w // sw


def _channel_taps(op, source, channel, pad, kind: str, scratch) -> tuple:
    """The taps of one channel's window (``window.tap_slices``) over ``source``'s
    channel ``channel`` padded by ``pad`` (low, high, value), read as ``kind`` says
    (``_scratch``) from ``scratch`` (its buffer, filled, or None), and the buffer after
    this channel. A
    horizontally strided window over rows wider than a vector reads phases written
    straight from the input into a filled buffer (``phase_split``; the plane is not
    copied first), its left padding rounded up to whole phase columns by ``shift`` more
    zero columns, which every tap skips. Split in the first-level cache, phases pay from
    narrower rows than the whole tensor's split (``windows.py``: two vectors): measured
    (AVX-512, one thread, against onnxruntime), EfficientNet's 5x5/2 + SiLU on 28-wide
    rows went from 4.2x to 1.5x onnxruntime's time and a 3x3/2 on 24-wide rows from
    1.36x to 1.15x, where 12-wide rows (one masked vector) lost, 1.04x -> 1.33x. A pool
    over an unpadded input whose strided rows are read contiguously
    (``strided_reads.py``) reads it in place instead, with no copy at all: SqueezeNet's
    3x3/2 max pool over 64x111x111 (odd rows: a padded plane, then its phases) took
    0.71x the time of the phases."""
    low, high, _ = pad
    n, _, h, w = static_tensor_type(source).shape
    out_shape = [static_tensor_type(op.results[0]).shape[0], 1, *static_tensor_type(op.results[0]).shape[2:]]
    window = window_of(op)
    strides, dilations = conv_params(op)
    sw, dw, ow = strides[1], dilations[1], out_shape[3]
    channel_of_source = slice_at(source, [0, channel, 0, 0], [n, 1, h, w])
    if kind == "input":
        return tap_slices(channel_of_source, out_shape, window, strides, dilations), scratch
    if kind == "plane":
        plane = _padded_plane(source, channel, low, high, scratch)
        return tap_slices(plane, out_shape, window, strides, dilations), plane
    if kind == "plane-phases":
        plane = _padded_plane(source, channel, low, high, scratch)
        x = phase_split(plane, sw, phase_width(window[1], sw, dw, ow))
        return tap_slices(x, out_shape, window, strides, dilations, phases=True), plane
    shift = -low[3] % sw
    offsets = [0, 0, low[2], 0, (low[3] + shift) // sw]
    inner = phase_split(channel_of_source, sw, w // sw, init=slice_at(scratch, offsets, [n, 1, h, sw, w // sw]))
    phases = insert_at(inner, scratch, offsets)
    return tap_slices(phases, out_shape, window, strides, dilations, phases=True, shift=shift), phases


def _channel_loop(op, epilogue, lanes: int):
    """The rewrite of one depthwise convolution (and its ``epilogue``, or None): the
    loop nest's result, which replaces the epilogue's (or the convolution's) result."""
    tensor, linalg, arith, scf = _mlir.tensor, _mlir.linalg, _mlir.arith, _mlir.scf
    source, low, high, value = static_pad(op)
    weights = op.operands[1] if op.name == DEPTHWISE else None
    init = op.operands[2]
    out_t = static_tensor_type(op.results[0])
    n, c, oh, ow = out_t.shape
    kh, kw = window_of(op)
    f32 = out_t.element_type
    fill = producer(init)
    fill = fill if fill is not None and fill.name == "linalg.fill" else None
    root = epilogue if epilogue is not None else op
    shared = linalg_init(root)
    if fill is not None and epilogue is None:
        shared = tensor.empty([n, c, oh, ow], f32)
    block = channel_block(c)
    index = ir.IndexType.get()

    def constant(v):
        return arith.constant(index, v)

    outer = scf.ForallOp([0], [c // block], [1], [shared])
    b, acc = outer.regions[0].blocks[0].arguments
    with ir.InsertionPoint(outer.regions[0].blocks[0]):
        first = arith.muli(b, constant(block))
        carried = [slice_at(acc, [0, first, 0, 0], [n, block, oh, ow])]
        separable = takes_separable(op, (low, high, value), ROW_VECTORS * lanes)
        kind, shape, covered = _scratch(op, source, (low, high, value), lanes)
        if not separable and shape is not None:
            carried.append(tensor.empty(shape, f32) if covered else filled(shape, value, f32))
        inner = scf.ForOp(constant(0), constant(block), constant(1), carried)
        with ir.InsertionPoint(inner.body):
            local, t = inner.induction_variable, inner.inner_iter_args[0]
            scratch = inner.inner_iter_args[1] if len(carried) > 1 else None
            channel = arith.addi(first, local)
            out = slice_at(t, [0, local, 0, 0], [n, 1, oh, ow])
            tail = None
            if epilogue is not None:
                operands = [(None if v == op.results[0] else _channel_slice(v, m, channel), m)
                            for v, m in zip(linalg_inputs(epilogue), indexing_maps(epilogue))]
                tail = epilogue.regions[0].blocks[0], operands, out
            if separable:
                y = separable_pool(op, source, channel, (low, high, value), out, tail)
            else:
                taps, scratch = _channel_taps(op, source, channel, (low, high, value), kind, scratch)
                if fill is not None:
                    start = linalg.fill(fill.operands[0], outs=[out])
                elif epilogue is None:
                    start = out  # the carried accumulator is the init: read in place, not copied in and out
                else:
                    start = slice_at(init, [0, channel, 0, 0], [n, 1, oh, ow])
                channel_weights = slice_at(weights, [channel, 0, 0], [1, kh, kw]) if weights is not None else None
                y = window_generic(POOLING.get(op.name, "sum"), taps, channel_weights, start, tail)
            scf.YieldOp([insert_at(y, t, [0, local, 0, 0])] + ([scratch] if scratch is not None else []))
        with ir.InsertionPoint(scf.InParallelOp().region.blocks[0]):
            values, static = split_offsets([0, first, 0, 0])
            tensor.parallel_insert_slice(inner.results[0], acc, values, [], [], static, [n, block, oh, ow], [1] * 4)
    return outer.results[0]


def _narrow_rows_looped(op, width: int) -> bool:
    """Whether ``op``, whose output rows (``width``) are narrower than a vector, takes
    the channel loop: a padded pool always, a padded depthwise convolution whose rows
    are at least ``LOOPED_COLUMNS`` wide. Its plane filled once per block of channels
    (``_scratch``), the loop costs less than the whole-tensor pad there (per-kernel
    profile, AVX-512, one thread, Zen 4: ShuffleNet's 272x14x14 3x3 0.050 -> 0.031 ms,
    its 136x28x28 3x3/2 0.057 -> 0.034 ms, 272x14x14 3x3/2 0.028 -> 0.015 ms,
    MobileNetV2's 144x24x24 3x3/2 0.041 -> 0.025 ms); on narrower rows it lost on both
    widths of vector (MobileNetV2's 960x3x3 0.013 -> 0.022 ms on AVX-512, its 384x6x6
    0.011 -> 0.016 ms on AVX2)."""
    if not any(sum(static_pad(op)[1:3], [])):
        return False
    return op.name in POOLING or width >= LOOPED_COLUMNS


def depthwise_channel_loops(module: ir.Module, lanes: int) -> int:
    """Rewrite every f32 static depthwise convolution and pooling whose rows are at least a vector
    wide (``lanes``: f32 lanes of a vector register; see the module docstring). Narrower
    rows stay whole-tensor windows (``windows.py``) unless ``_narrow_rows_looped``: per
    channel, a plane of a few masked vectors costs more in loop overhead than its pad
    saves (measured, AVX-512: EfficientNet's 672 channels of 6x6, 5x5 + SiLU, 2.8x
    onnxruntime's time as a whole-tensor window, 3.3x in the loop). A padded pool takes
    the loop on narrower rows too: the whole-tensor pad costs more than the loop
    (per-kernel profile, one thread: AVX-512, 512 channels of 13x13 3x3/1 max 0.071 ->
    0.043 ms, 1024 of 7x7 0.057 -> 0.040 ms; AVX2, where 7 columns are one vector,
    0.033 -> 0.036 ms). Returns how many were rewritten."""
    count = 0
    for op in linalg_ops(module):
        if op.name not in CHANNEL_LOOP_OPS or len(op.results) != 1:
            continue
        types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
        if any(t is None or not is_f32(t) for t in types):
            continue
        if types[2].shape[3] < lanes and not _narrow_rows_looped(op, types[2].shape[3]):
            continue
        if op.name in POOLING and prod(window_of(op)) > MAX_TAPS:
            continue  # scalar loops (windows.py)
        epilogue = taken_epilogue(op)
        replace_window(op, epilogue, lambda: _channel_loop(op, epilogue, lanes))
        count += 1
    return count


__all__ = ["channel_block", "depthwise_channel_loops", "filled", "static_pad"]
