"""A convolution kernel function computed in NC4HW4, the channel-blocked layout of MNN
and ncnn (``channel_blocks.py`` decides which kernels and values).

An activation ``[N, C, H, W]`` is kept as ``[N, ceil(C/4), H, W, 4]``: four channels of
one pixel innermost, the channels past C zero (a convolution's filters are zero there,
so whatever its padded input channels hold is never read into a result). The
convolution becomes a generic over ``(n, fb, oh, ow, fi, cb, kh, kw, ci)`` whose
filters are packed at compile time as ``[F/4, C/4, KH, KW, 4 ci, 4 fi]``: a thread's
tile is four output channels of a pixel, one vec4 store, and each step of the
reduction loads a vec4 of filters for one input element (the NCHW schedule loads four
input elements, bounds-checked, per filter element). Its element-wise epilogue iterates
over the blocked domain, a per-channel operand (a bias) packed as ``[F/4, 4]``.

``blockable(function)`` says whether a kernel function has that form (a convolution
with constant filters, element-wise ops after it); ``block_kernel(function, blocked,
calls)`` rewrites it, its activation arguments read blocked where ``blocked`` says so
and as NCHW (channels padded) elsewhere, its result blocked. ``unblocking_kernel``
makes the kernel function that brings a blocked value back to NCHW.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...kernel_functions import KERNEL_ATTR
from ...linalg_builders import affine_map, generic, make_pad, with_operands
from ..constant_filters import ConstantFilters
from ..linalg_queries import indexing_maps, producer
from ..lowered_module import symbol_name
from .gathers import pad_value

BLOCK = 4  # channels a block: one vec4
CONVOLUTION = "linalg.conv_2d_nchw_fchw"
ACCEPTED = ("arith.constant", "tensor.empty", "linalg.fill", "tensor.expand_shape", "tensor.pad", CONVOLUTION,
            "linalg.generic", "func.return")
# Element-wise ops that may make an infinity of the zeros past C, which the next
# convolution's zero filters would turn into NaN.
UNBOUNDED = ("arith.divf", "math.log", "math.log1p", "math.log2", "math.log10", "math.rsqrt", "math.powf")


def blocks(channels: int) -> int:
    return -(-channels // BLOCK)


def blocked_type(t: ir.Type) -> ir.RankedTensorType:
    """``[N, C, H, W]`` -> ``[N, ceil(C/4), H, W, 4]``."""
    n, c, h, w = ir.RankedTensorType(t).shape
    return ir.RankedTensorType.get([n, blocks(c), h, w, BLOCK], ir.RankedTensorType(t).element_type)


def _is_activation(t: ir.Type) -> bool:
    if not isinstance(t, ir.RankedTensorType):
        return False
    tensor = ir.RankedTensorType(t)
    return tensor.rank == 4 and tensor.has_static_shape and isinstance(tensor.element_type, ir.F32Type)


def _channel_values(value, reader, operand: int, calls: dict) -> ConstantFilters | None:
    """Where the per-channel values ``value`` (``[C, 1, 1]`` or ``[C]``, operand
    ``operand`` of ``reader``) come from: a constant, or a kernel argument every call
    passes a constant (maybe expanded); None when neither."""
    owner = producer(value)
    if owner is not None and owner.name == "tensor.expand_shape":
        reader, operand = owner, 0
    values = ConstantFilters(reader, calls, operand)
    return values if values.constant() else None


def _operand_kind(value, indexing: ir.AffineMap, reader=None, operand=0, calls=None) -> str | None:
    """How an element-wise op's operand reads: ``activation`` (the whole NCHW tensor),
    ``channel`` (a constant per channel), ``scalar`` (no loop dim), or None (another
    form: not blockable)."""
    dims = [e for e in indexing.results if isinstance(e, ir.AffineDimExpr)]
    if not all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in indexing.results):
        return None
    positions = [ir.AffineDimExpr(e).position for e in dims]
    if positions == [0, 1, 2, 3] and len(indexing.results) == 4 and _is_activation(value.type):
        return "activation"
    if not positions:
        return "scalar"
    if positions == [1] and _channel_values(value, reader, operand, calls) is not None:
        return "channel"
    return None


def _convolution_ok(conv, calls: dict) -> bool:
    source = conv.operands[0]
    pad = producer(source)
    if pad is not None and pad.name == "tensor.pad":
        low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
        high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
        if low[:2] != [0, 0] or high[:2] != [0, 0] or min(low + high) < 0 or _pad_value(pad) is None:
            return False
        source = pad.operands[0]
    fill = producer(conv.operands[2])
    return (isinstance(source, ir.BlockArgument) and _is_activation(source.type)
            and fill is not None and fill.name == "linalg.fill" and ConstantFilters(conv, calls).constant())


def _pad_value(pad) -> float | None:
    """The float a ``tensor.pad`` fills with, else None."""
    constant = pad_value(pad)
    if constant is None or not isinstance(constant.attributes["value"], ir.FloatAttr):
        return None
    return ir.FloatAttr(constant.attributes["value"]).value


def blockable(function, calls: dict) -> bool:
    """Whether the kernel ``function`` is one convolution (constant filters, its input
    an argument maybe padded spatially) and element-wise ops over its result, returning
    one activation computed there."""
    block = function.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    convolutions = [op for op in ops if op.name == CONVOLUTION]
    if len(convolutions) != 1 or any(op.name not in ACCEPTED for op in ops):
        return False
    if not _convolution_ok(convolutions[0], calls):
        return False
    computed = {convolutions[0].results[0]}
    for op in ops:
        if op.name != "linalg.generic":
            continue
        if len(op.results) != 1 or not _is_activation(op.results[0].type):
            return False
        maps = indexing_maps(op)
        iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
        if any("parallel" not in i for i in iterators) or maps[-1] != ir.AffineMap.get_identity(4):
            return False
        if any(inner.name == "linalg.index" or inner.name in UNBOUNDED for inner in op.regions[0].blocks[0].operations):
            return False
        for number, (value, indexing) in enumerate(zip(list(op.operands)[:-1], maps[:-1])):
            kind = _operand_kind(value, indexing, op, number, calls)
            if kind is None or (kind == "activation" and value not in computed
                                and not isinstance(value, ir.BlockArgument)):
                return False
        computed.add(op.results[0])
    returned = list(ops[-1].operands)
    return len(returned) == 1 and returned[0] in computed


def has_window(function) -> bool:
    """Whether the convolution of the ``blockable`` kernel ``function`` has a window
    (filters of more than one position)."""
    conv = next(op.operation for op in function.regions[0].blocks[0].operations if op.operation.name == CONVOLUTION)
    return math.prod(ir.RankedTensorType(conv.operands[1].type).shape[2:]) > 1


def _pad(value, low: list, high: list, fill: float):
    """``tensor.pad`` of ``value`` (static ``low`` / ``high``) with the constant ``fill``."""
    if not any(low) and not any(high):
        return value
    return make_pad(value, low, high, _mlir.arith.constant(ir.RankedTensorType(value.type).element_type, fill))


def _read(value, blocked: bool, spatial_low=(0, 0), spatial_high=(0, 0), fill=0.0):
    """An activation as a blocked op reads it: (tensor, the exprs of its channel dims
    (``(cb, ci)`` blocked, ``(cb * 4 + ci,)`` NCHW with its channels padded to a
    multiple of 4)), padded spatially as given."""
    if blocked:
        return _pad(value, [0, 0, *spatial_low, 0], [0, 0, *spatial_high, 0], fill), True
    channels = ir.RankedTensorType(value.type).shape[1]
    return _pad(value, [0, 0, *spatial_low], [0, blocks(channels) * BLOCK - channels, *spatial_high], fill), False


def _activation_map(dims: int, blocked: bool, cb: int, ci: int, rows, columns) -> ir.AffineMap:
    d = ir.AffineDimExpr.get
    channel = [d(cb), d(ci)] if blocked else [d(cb) * BLOCK + d(ci)]
    result = [d(0), channel[0], rows, columns] + channel[1:]
    return affine_map(dims, result)


def _pack_filters(w: np.ndarray) -> np.ndarray:
    """``[F, C, KH, KW]`` -> ``[F/4, C/4, KH, KW, 4 ci, 4 fi]``, zero past F and C."""
    f, c, kh, kw = w.shape
    padded = np.zeros((blocks(f) * BLOCK, blocks(c) * BLOCK, kh, kw), w.dtype)
    padded[:f, :c] = w
    return padded.reshape(blocks(f), BLOCK, blocks(c), BLOCK, kh, kw).transpose(0, 2, 4, 5, 3, 1)


def _pack_channels(values: np.ndarray) -> np.ndarray:
    """``[C]`` (or ``[C, 1, 1]``) -> ``[C/4, 4]``, zero past C."""
    padded = np.zeros(blocks(values.size) * BLOCK, values.dtype)
    padded[:values.size] = values.reshape(-1)
    return padded.reshape(-1, BLOCK)


def _blocked_init(like, fill=None):
    empty = _mlir.tensor.empty(blocked_type(like.type).shape, ir.RankedTensorType(like.type).element_type)
    return empty if fill is None else _mlir.linalg.fill(fill, outs=[empty])


def _blocked_convolution(conv, layouts: dict, calls: dict):
    """The blocked generic computing ``conv``; its filters repacked (``_pack_filters``)."""
    source, low, high, fill = conv.operands[0], [0, 0], [0, 0], 0.0
    pad = producer(source)
    if pad is not None and pad.name == "tensor.pad":
        low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))[2:]
        high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))[2:]
        fill, source = _pad_value(pad), pad.operands[0]
    strides = [int(s) for s in ir.DenseIntElementsAttr(conv.attributes["strides"])]
    dilations = [int(s) for s in ir.DenseIntElementsAttr(conv.attributes["dilations"])]
    value, blocked = layouts[source]
    x, blocked = _read(value, blocked, low, high, fill)
    filters = ConstantFilters(conv, calls).transformed(_pack_filters)
    # Loops: n, fb, oh, ow, fi | cb, kh, kw, ci.
    d = ir.AffineDimExpr.get
    x_map = _activation_map(9, blocked, 5, 8, d(2) * strides[0] + d(6) * dilations[0],
                            d(3) * strides[1] + d(7) * dilations[1])
    init = _blocked_init(conv.results[0], producer(conv.operands[2]).operands[0])

    def body(a, b, acc):
        return _mlir.arith.addf(acc, _mlir.arith.mulf(a, b))

    return generic([x, filters], [x_map, affine_map(9, [1, 5, 6, 7, 8, 4]), affine_map(9, [0, 1, 2, 3, 4])], [init],
                   body, ["parallel"] * 5 + ["reduction"] * 4)[0]


def _blocked_elementwise(op, layouts: dict, calls: dict):
    """``op`` over the blocked domain ``(n, cb, h, w, ci)``."""
    inputs, maps = [], []
    for number, (value, indexing) in enumerate(zip(list(op.operands)[:-1], indexing_maps(op)[:-1])):
        kind = "activation" if value in layouts else _operand_kind(value, indexing, op, number, calls)
        if kind == "activation":
            x, blocked = _read(*layouts[value])
            inputs.append(x)
            maps.append(_activation_map(5, blocked, 1, 4, ir.AffineDimExpr.get(2), ir.AffineDimExpr.get(3)))
        elif kind == "channel":
            inputs.append(_channel_values(value, op, number, calls).transformed(_pack_channels))
            maps.append(affine_map(5, [1, 4]))
        else:
            inputs.append(value)
            maps.append(ir.AffineMap.get(5, 0, list(indexing.results)))
    return with_operands(op, inputs, maps + [affine_map(5, [0, 1, 2, 3, 4])], [_blocked_init(op.results[0])],
                         ["parallel"] * 5)[0]


def block_kernel(function, blocked: list, calls: dict):
    """Rewrite the ``blockable`` kernel ``function`` to compute in NC4HW4: argument i
    read blocked where ``blocked[i]`` (retyped), as NCHW elsewhere; its result blocked."""
    block = function.regions[0].blocks[0]
    layouts = {}
    for argument, is_blocked in zip(block.arguments, blocked):
        if is_blocked:
            argument.set_type(blocked_type(argument.type))
        layouts[argument] = (argument, is_blocked)
    ops = [op.operation for op in block.operations]
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            if op.name == CONVOLUTION:
                layouts[op.results[0]] = (_blocked_convolution(op, layouts, calls), True)
            elif op.name == "linalg.generic":
                layouts[op.results[0]] = (_blocked_elementwise(op, layouts, calls), True)
            elif op.name == "func.return":
                op.operands[0] = layouts[op.operands[0]][0]
    # The NCHW ops now unread, from the block as it is (repacking erased constants).
    for op in reversed([op.operation for op in block.operations][:-1]):
        if all(len(list(r.uses)) == 0 for r in op.results):
            op.erase()
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in list(block.operations)[-1].operands]))


def unblocking_kernel(module_body, nchw: ir.RankedTensorType):
    """A kernel function ``[N, C/4, H, W, 4]`` -> ``nchw`` (appended to ``module_body``): the
    NCHW copy a reader outside the blocked kernels takes."""
    name = "kernel_nc4hw4_to_nchw_" + "x".join(str(d) for d in nchw.shape)
    for op in module_body.operations:
        if op.operation.name == "func.func" and symbol_name(op.operation) == name:
            return op
    with ir.InsertionPoint(module_body), ir.Location.unknown():
        function = _mlir.func.FuncOp(name, ir.FunctionType.get([blocked_type(nchw)], [nchw]), visibility="private")
        function.attributes[KERNEL_ATTR] = ir.UnitAttr.get()
        entry = function.add_entry_block()
        with ir.InsertionPoint(entry):
            # A permutation, then views: no tile of the copy splits a block of channels.
            n, c, h, w = nchw.shape
            empty = _mlir.tensor.empty([n, blocks(c), BLOCK, h, w], nchw.element_type)
            moved = generic([entry.arguments[0]], [affine_map(5, [0, 1, 3, 4, 2]), affine_map(5, [0, 1, 2, 3, 4])],
                            [empty], lambda x, _out: x)[0]
            padded = ir.RankedTensorType.get([n, blocks(c) * BLOCK, h, w], nchw.element_type)
            result = [_mlir.tensor.collapse_shape(padded, moved, [[0], [1, 2], [3], [4]])]
            if blocks(c) * BLOCK != c:
                result = [_mlir.tensor.extract_slice(nchw, result[0], [], [], [], [0] * 4, list(nchw.shape), [1] * 4)]
            _mlir.func.ReturnOp(result)
    return function


__all__ = ["BLOCK", "block_kernel", "blockable", "blocked_type", "blocks", "has_window", "unblocking_kernel"]
