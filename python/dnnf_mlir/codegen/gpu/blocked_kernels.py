"""Kernel functions computed in NC4HW4 (``nc4hw4.py``; ``channel_blocks.py`` decides
which kernels and values): a convolution with constant filters (grouped too, where each
group's channels fill their blocks: ``blocked_groups.py``), element-wise ops, a LRN's
window of channels (``blocked_windows.py``), and the reorganizing ops of
``blocked_reorganize.py`` (pooling, concatenation, slices, flattenings).

The convolution becomes a generic over ``(n, fb, oh, ow, fi, cb, kh, kw, ci)`` whose
filters are packed at compile time as ``[F/4, C/4, KH, KW, 4 ci, 4 fi]``: a thread's
tile is four output channels of a pixel, one vec4 store, and each step of the
reduction loads a vec4 of filters for one input element (the NCHW schedule loads four
input elements, bounds-checked, per filter element). An element-wise op iterates over
the blocked domain, a per-channel operand (a bias) packed as ``[C/4, 4]``.

``blockable(function)`` says whether a kernel function has that form (every op one of
those, each activation it reads an argument or computed there, every result an
activation or a flattened global pooling); ``block_kernel(function, blocked, calls)``
rewrites it, its activation arguments read blocked where ``blocked`` says so and as
NCHW (channels padded) elsewhere, its activation results blocked. ``unblocking_kernel``
makes the kernel function that brings a blocked value back to NCHW.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...kernel_functions import KERNEL_ATTR
from ...linalg_builders import affine_map, generic, with_operands
from ..constant_filters import ConstantFilters
from ..linalg_queries import channel_pad, indexing_maps, is_channel_window, only_user, producer
from ..lowered_module import symbol_name
from .blocked_groups import GROUPED, GroupedConvolution, collapses_groups
from .blocked_reorganize import FLATTENING, REORGANIZING, blocked_op, tolerated
from .blocked_windows import blocked_channel_window
from .nc4hw4 import BLOCK, activation_map, blocked_init, blocked_type, blocks, is_activation, materialized, read

CONVOLUTION = "linalg.conv_2d_nchw_fchw"
CONVOLUTIONS = (CONVOLUTION, GROUPED)
ACCEPTED = ("arith.constant", "tensor.empty", "linalg.fill", "tensor.expand_shape", "linalg.generic",
            "func.return") + CONVOLUTIONS + REORGANIZING
PLAIN_READERS = ("linalg.generic", "tensor.expand_shape", "tensor.collapse_shape")
# Element-wise ops that may make an infinity of the values past C, which the next
# convolution's zero filters would turn into NaN (see ``_bounded`` for the safe ones).
UNBOUNDED = ("arith.divf", "math.log", "math.log1p", "math.log2", "math.log10", "math.rsqrt", "math.powf")


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
    ``channel`` (a constant per channel), ``scalar`` (no loop dim), ``pixel`` (no channel
    dim, not an activation: an average pooling's divisors where its padding is not
    counted, ``[H, W]``), or None (another form: not blockable). A scalar or pixel operand
    reads the same in the blocked domain ``(n, cb, h, w, ci)``: its dims keep their places."""
    dims = [e for e in indexing.results if isinstance(e, ir.AffineDimExpr)]
    if not all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in indexing.results):
        return None
    positions = [ir.AffineDimExpr(e).position for e in dims]
    if positions == [0, 1, 2, 3] and len(indexing.results) == 4 and is_activation(value.type):
        return "activation"
    if not positions:
        return "scalar"
    if 1 not in positions and not is_activation(value.type):
        return "pixel"
    if positions == [1] and _channel_values(value, reader, operand, calls) is not None:
        return "channel"
    return None


def _bounded(body, constant_inputs: set) -> bool:
    """Whether an element-wise ``body`` keeps finite values finite in the lanes past C:
    each op of ``UNBOUNDED`` there divides by a nonzero constant or computes on values
    made of per-channel, scalar and per-pixel constants only (``constant_inputs``: those
    block arguments), which the lanes past C take from channel C - 1 (``_pack_channels``)
    or share with the pixel's channels, so that they are as finite as a channel's (a
    batch normalization's ``scale / sqrt(var + eps)``, an average pooling's divisors)."""
    constant = set(constant_inputs)
    for inner in body.operations:
        operands = list(inner.operands)
        made_of_constants = all(v in constant or (producer(v) is not None and producer(v).name == "arith.constant")
                                or (isinstance(v, ir.BlockArgument) and v.owner != body) for v in operands)
        if made_of_constants:
            constant.update(inner.results)
        elif inner.name == "arith.divf":
            divisor = producer(operands[1])
            if not (divisor is not None and divisor.name == "arith.constant"
                    and isinstance(divisor.attributes["value"], ir.FloatAttr)
                    and ir.FloatAttr(divisor.attributes["value"]).value != 0.0) and operands[1] not in constant:
                return False
        elif inner.name in UNBOUNDED:
            return False
    return True


def _is_constant(value) -> bool:
    """Whether ``value`` is an ``arith.constant`` of the kernel."""
    owner = producer(value)
    return owner is not None and owner.name == "arith.constant"


def _elementwise_ok(op, activations: set, calls: dict) -> bool:
    if len(op.results) != 1 or not is_activation(op.results[0].type):
        return False
    maps = indexing_maps(op)
    iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any("parallel" not in i for i in iterators) or maps[-1] != ir.AffineMap.get_identity(4):
        return False
    body = op.regions[0].blocks[0]
    if any(inner.name == "linalg.index" for inner in body.operations):
        return False
    constant_inputs = set()
    for number, (value, indexing) in enumerate(zip(list(op.operands)[:-1], maps[:-1])):
        kind = _operand_kind(value, indexing, op, number, calls)
        if kind is None or (kind == "activation" and value not in activations):
            return False
        if kind in ("channel", "scalar") or (kind == "pixel" and _is_constant(value)):
            constant_inputs.add(body.arguments[number])
    whole_blocks = ir.RankedTensorType(op.results[0].type).shape[1] % BLOCK == 0  # no lanes past C
    return whole_blocks or _bounded(body, constant_inputs)


def _convolution_ok(conv, activations: set, calls: dict) -> bool:
    fill = producer(conv.operands[2])
    if fill is None or fill.name != "linalg.fill":
        return False
    if conv.name == GROUPED:
        grouped = GroupedConvolution.of(conv, calls)
        return grouped is not None and grouped.x in activations
    return conv.operands[0] in activations and ConstantFilters(conv, calls).constant()


def _reads_plain(op, plain: set) -> bool:
    """Whether ``op`` computes on a global pooling's ``[N, C]`` (``plain``), which stays
    NCHW: the ops after it are kept as they are."""
    return op.name in PLAIN_READERS and any(value in plain for value in op.operands)


def blockable(function, calls: dict) -> bool:
    """Whether every op of the kernel ``function`` has a blocked form reading activations
    that are its arguments or computed there (at most one convolution), or computes on a
    global pooling's ``[N, C]``, and it returns values computed there, each 4-D one an
    activation."""
    block = function.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    if sum(op.name in CONVOLUTIONS for op in ops) > 1 or any(op.name not in ACCEPTED for op in ops):
        return False
    activations = {argument for argument in block.arguments if is_activation(argument.type)}
    plain = set()
    for op in ops:
        if _reads_plain(op, plain):
            if any(value in activations for value in op.operands):
                return False
            plain.add(op.results[0])
            continue
        if channel_pad(op) is not None:  # computed by the gather of its window (``is_channel_window``)
            if op.operands[0] not in activations:
                return False
            continue
        if collapses_groups(op):
            if op.operands[0] not in activations:
                return False
            activations.add(op.results[0])
            continue
        if is_channel_window(op):
            ok = producer(op.operands[0]).operands[0] in activations
        elif op.name in CONVOLUTIONS:  # a grouped one's [N, G, F/G, OH, OW] is read by its collapse only
            ok = _convolution_ok(op, activations, calls)
        elif op.name == "linalg.generic":
            ok = _elementwise_ok(op, activations, calls)
        elif op.name in REORGANIZING:
            ok = tolerated(op, activations)
        else:
            continue
        if not ok:
            return False
        (plain if op.name in FLATTENING else activations).add(op.results[0])
    returned = list(ops[-1].operands)
    computed = (activations | plain) - set(block.arguments)
    return bool(returned) and all(
        value in computed and (value in activations or ir.RankedTensorType(value.type).rank != 4) for value in returned)


def has_window(function) -> bool:
    """Whether the ``blockable`` kernel ``function`` has a convolution with a window
    (filters of more than one position)."""
    return any(op.operation.name in CONVOLUTIONS and math.prod(ir.RankedTensorType(op.operands[1].type).shape[-2:]) > 1
               for op in function.regions[0].blocks[0].operations)


def _pack_filters(w: np.ndarray) -> np.ndarray:
    """``[F, C, KH, KW]`` -> ``[F/4, C/4, KH, KW, 4 ci, 4 fi]``, zero past F and C."""
    f, c, kh, kw = w.shape
    padded = np.zeros((blocks(f) * BLOCK, blocks(c) * BLOCK, kh, kw), w.dtype)
    padded[:f, :c] = w
    return padded.reshape(blocks(f), BLOCK, blocks(c), BLOCK, kh, kw).transpose(0, 2, 4, 5, 3, 1)


def _pack_channels(values: np.ndarray) -> np.ndarray:
    """``[C]`` (or ``[C, 1, 1]``) -> ``[C/4, 4]``, channel C - 1's value past C (see ``_bounded``)."""
    padded = np.full(blocks(values.size) * BLOCK, values.reshape(-1)[-1], values.dtype)
    padded[:values.size] = values.reshape(-1)
    return padded.reshape(-1, BLOCK)


def _blocked_convolution(conv, layouts: dict, calls: dict):
    """The blocked generic computing ``conv`` (grouped: each output block over its group's
    input blocks, ``blocked_groups.py``); its filters repacked (``_pack_filters``)."""
    strides = [int(s) for s in ir.DenseIntElementsAttr(conv.attributes["strides"])]
    dilations = [int(s) for s in ir.DenseIntElementsAttr(conv.attributes["dilations"])]
    # Loops: n, fb, oh, ow, fi | cb, kh, kw, ci.
    d = ir.AffineDimExpr.get
    grouped = GroupedConvolution.of(conv, calls) if conv.name == GROUPED else None
    x, blocked = read(*layouts[grouped.x if grouped else conv.operands[0]])
    filters = (grouped.filters if grouped else ConstantFilters(conv, calls)).transformed(_pack_filters)
    x_map = activation_map(9, blocked, grouped.input_block(d(1), d(5)) if grouped else d(5), d(8),
                           d(2) * strides[0] + d(6) * dilations[0], d(3) * strides[1] + d(7) * dilations[1])
    result = only_user(conv.results[0]).results[0] if grouped else conv.results[0]  # grouped: its collapse
    init = blocked_init(result, producer(conv.operands[2]).operands[0])

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
            x, blocked = read(*layouts[value])
            inputs.append(x)
            maps.append(activation_map(5, blocked, 1, 4, ir.AffineDimExpr.get(2), ir.AffineDimExpr.get(3)))
        elif kind == "channel":
            inputs.append(_channel_values(value, op, number, calls).transformed(_pack_channels))
            maps.append(affine_map(5, [1, 4]))
        else:
            inputs.append(value)
            maps.append(ir.AffineMap.get(5, 0, list(indexing.results)))
    return with_operands(op, inputs, maps + [affine_map(5, [0, 1, 2, 3, 4])], [blocked_init(op.results[0])],
                         ["parallel"] * 5)[0]


def computes_blocked_convolution(op) -> bool:
    """Whether the linalg op is a convolution ``_blocked_convolution`` made (filters read
    ``[F/4, C/4, KH, KW, 4 ci, 4 fi]``, result ``[N, F/4, OH, OW, 4 fi]``): the schedule
    tiles its output-channel blocks where the width has no divisor of 4."""
    if op.name != "linalg.generic":
        return False
    maps = indexing_maps(op)  # its input may be read in its body by then (a pad as a gather)
    return (maps[-1] == affine_map(9, [0, 1, 2, 3, 4]) and maps[-1].n_dims == 9
            and any(m == affine_map(9, [1, 5, 6, 7, 8, 4]) for m in maps[:-1]))


def block_kernel(function, blocked: list, calls: dict):
    """Rewrite the ``blockable`` kernel ``function`` to compute in NC4HW4: argument i
    read blocked where ``blocked[i]`` (retyped), as NCHW elsewhere; its activation
    results blocked."""
    block = function.regions[0].blocks[0]
    layouts = {}
    for argument, is_blocked in zip(block.arguments, blocked):
        if is_activation(argument.type):
            layouts[argument] = (argument, is_blocked)
        if is_blocked:
            argument.set_type(blocked_type(argument.type))
    ops = [op.operation for op in block.operations]
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            if _reads_plain(op, {value for value, (_, blocked) in layouts.items() if blocked is None}):
                for number, value in enumerate(list(op.operands)):
                    op.operands[number] = layouts.get(value, (value,))[0]
                layouts[op.results[0]] = (op.results[0], None)
            elif channel_pad(op) is not None:
                continue  # computed by its window's gather
            elif is_channel_window(op):
                layouts[op.results[0]] = (blocked_channel_window(op, layouts), True)
            elif collapses_groups(op):
                layouts[op.results[0]] = layouts[op.operands[0]]
            elif op.name in CONVOLUTIONS:
                layouts[op.results[0]] = (_blocked_convolution(op, layouts, calls), True)
            elif op.name == "linalg.generic":
                layouts[op.results[0]] = (_blocked_elementwise(op, layouts, calls), True)
            elif op.name in REORGANIZING:
                layouts[op.results[0]] = blocked_op(op, layouts)
            elif op.name == "func.return":
                for number, value in enumerate(list(op.operands)):
                    x, blocked = layouts[value]
                    op.operands[number] = x if blocked is None else materialized(x, blocked)
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


__all__ = ["BLOCK", "block_kernel", "blockable", "blocked_type", "blocks", "computes_blocked_convolution", "has_window",
           "unblocking_kernel"]
