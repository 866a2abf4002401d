"""Pooling and depthwise convolutions as element-wise ops over the window's taps.

``linalg.pooling_nchw_max`` / ``pooling_nchw_sum`` and
``depthwise_conv_2d_nchw_chw`` ran as scalar loops: MLIR's vectorizer takes 1-d
convolutions only, and ``decompose`` has no rule for the NCHW depthwise op. ``windows_to_taps`` rewrites each (f32, static)
as one element-wise ``linalg.generic`` over the output ``[N, C, OH, OW]`` that reads
the KH x KW taps of the window, each a (strided) ``extract_slice`` of the input::

    y[n, c, oh, ow] = init[n, c, oh, ow]  (+ / max)  x[n, c, sh*oh + dh*kh, sw*ow + dw*kw]
                                                     (* w[c, kh, kw] for depthwise)

for every (kh, kw) in order, i.e. the window unrolled in the body and the same
arithmetic in the same order as the named op. The generic schedule then vectorizes
it along the output width; an accumulator that is a ``linalg.fill`` (the usual
-inf / 0) starts the chain as a scalar instead of being written and read back. A
window covering the whole input (global pooling, one output per channel) becomes a
reduction over it instead, vectorized over the window.

Taps of a horizontally strided window are strided reads, which the vector lowering
turns into one scalar load per lane, unless ``strided_reads.py`` reads their span
contiguously and shuffles the lanes out (stride 2). Here they are rows narrower than a
vector: wider ones, of pooling as of depthwise convolutions, are computed a channel at
a time by ``depthwise.py``, which pads a channel's plane or splits it by column phase
in the first-level cache (``phase_split``) instead of copying the whole tensor.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import generic, inline_body
from ..linalg_queries import (conv_params, elementwise_consumer, indexing_maps, is_f32, linalg_init, linalg_inputs,
                              linalg_ops, reassociation, static_tensor_type)

POOLING = {"linalg.pooling_nchw_max": "max", "linalg.pooling_nchw_sum": "sum"}
DEPTHWISE = "linalg.depthwise_conv_2d_nchw_chw"
MAX_TAPS = 49  # operands of one generic; bigger windows stay on scalar loops


def window_of(op):
    """(KH, KW) of a pooling / depthwise op (from the window or filter operand)."""
    shape = static_tensor_type(op.operands[1]).shape
    return shape[-2], shape[-1]


def _identity(rank: int):
    return ir.AffineMap.get_identity(rank)


def _combine(kind: str, acc, tap, weight=None):
    """``acc`` (max / +) ``tap`` (times ``weight``: one fused multiply-add, where LLVM
    left a multiply and an add apart; ``squares``: + ``tap`` times itself, a multiply
    and an add as the squares and their sum were computed apart). ``acc`` None: the
    first tap of a sum from zero (LLVM keeps ``x + 0.0``, which is not ``x`` for
    ``x = -0.0``). The max ignores the sign of zero (``nsz``: ONNX's MaxPool leaves it
    open, onnxruntime returns either zero), which x86 has no single instruction for: a
    max and a NaN check (3 AVX-512 instructions) where -0 < +0 took 6. NaN still wins."""
    arith = _mlir.arith
    if kind == "max":
        return arith.maximumf(acc, tap, fastmath=ir.Attribute.parse("#arith.fastmath<nsz>"))
    if kind == "squares":
        tap = arith.mulf(tap, tap)
    if weight is not None:
        return arith.mulf(tap, weight) if acc is None else _mlir.math.fma(tap, weight, acc)
    return tap if acc is None else arith.addf(acc, tap)


def _is_zero(value) -> bool:
    """Whether ``value`` is the constant 0.0."""
    owner = value.owner if isinstance(value, ir.OpResult) else None
    return owner is not None and owner.name == "arith.constant" and ir.FloatAttr(owner.attributes["value"]).value == 0.0


def _fill_value(init):
    """The scalar a ``linalg.fill`` accumulator holds, else None."""
    owner = init.owner if isinstance(init, ir.OpResult) else None
    return owner.operands[0] if owner is not None and owner.name == "linalg.fill" else None


def _generic(inputs, maps, init, iterators, body):
    """A linalg.generic over ``inputs`` into ``init`` whose body is ``body(args, acc)``;
    a filled ``init`` is replaced by the fill's destination and ``acc`` is the fill value."""
    start = _fill_value(init)
    if start is not None and "reduction" not in iterators:
        init = init.owner.operands[1]  # what the fill wrote into
    else:
        start = None

    def block(*scalars):
        return body(list(scalars[:-1]), scalars[-1] if start is None else start)

    return generic(inputs, maps, [init], block, iterators)[0]


def phase_width(kw: int, sw: int, dw: int, ow: int, shift: int = 0) -> int:
    """Columns of each phase that a window's taps read (its input shifted right by ``shift``)."""
    return max((j * dw + shift) // sw for j in range(kw)) + ow


def tap_slices(x, out_shape, window, strides, dilations, phases: bool = False, shift: int = 0) -> list:
    """The window's taps, row by row: for tap (i, j), ``x[n, c, sh*oh + dh*i, sw*ow +
    dw*j]`` over the output ``out_shape``. With ``phases``, ``x`` is the input's phase
    split ``[N, C, H, sw, W']`` (shifted right by ``shift`` columns): tap j reads
    phase ``(dw*j + shift) % sw`` contiguously."""
    tensor = _mlir.tensor
    n, c, oh, ow = out_shape
    (kh, kw), (sh, sw), (dh, dw) = window, strides, dilations
    out_t = ir.RankedTensorType.get(list(out_shape), static_tensor_type(x).element_type)
    taps = []
    for i in range(kh):
        for j in range(kw):
            if phases:
                column = j * dw + shift
                taps.append(tensor.extract_slice(out_t, x, [], [], [], [0, 0, i * dh, column % sw, column // sw],
                                                 [n, c, oh, 1, ow], [1, 1, sh, 1, 1]))
            else:
                taps.append(tensor.extract_slice(out_t, x, [], [], [], [0, 0, i * dh, j * dw], [n, c, oh, ow],
                                                 [1, 1, sh, sw]))
    return taps


def window_generic(kind: str, taps: list, weights, init, epilogue=None, chains: int = 1):
    """One element-wise generic over the output (``[N, C, ...]``) combining the ``taps``
    in order (``sum`` of the taps times ``weights`` ``[C, KH, KW]`` for a depthwise
    convolution, ``max`` or ``sum`` for pooling, ``squares``: the sum of their squares,
    a LRN's) into ``init``. ``epilogue``: (block, [(value, map)], init) of an
    element-wise consumer of the result (the result's own entries have value None),
    applied to the value in registers: the result is written once, not written, read
    back and written again. ``chains``: the taps are combined
    into that many partial results (tap t into ``t % chains``), combined pairwise at
    the end: independent chains of multiply-adds where one would wait on each result."""
    tensor = _mlir.tensor
    rank, c = static_tensor_type(init).rank, static_tensor_type(init).shape[1]
    kw = static_tensor_type(weights).shape[2] if weights is not None else 1
    w_t = ir.RankedTensorType.get([c], static_tensor_type(init).element_type)
    per_channel = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(1)])
    inputs, maps = [], []
    for t, tap in enumerate(taps):
        inputs.append(tap)
        maps.append(_identity(rank))
        if weights is not None:
            inputs.append(tensor.extract_slice(w_t, weights, [], [], [], [0, t // kw, t % kw], [c, 1, 1], [1, 1, 1]))
            maps.append(per_channel)

    def combine(args, acc, chains=chains):
        step = 2 if weights is not None else 1
        chains = min(chains, len(args) // step)
        sums = [None if kind != "max" and _is_zero(acc) else acc] + [None] * (chains - 1)
        for t in range(0, len(args), step):
            k = (t // step) % chains
            sums[k] = _combine(kind, sums[k], args[t], args[t + 1] if weights is not None else None)
        total = "max" if kind == "max" else "sum"  # the chains' partial results: squared already
        while len(sums) > 1:
            odd = [sums[-1]] if len(sums) % 2 else []
            sums = [_combine(total, a, b) for a, b in zip(sums[::2], sums[1::2])] + odd
        return sums[0]

    if epilogue is None:
        return _generic(inputs, maps + [_identity(rank)], init, ["parallel"] * rank, combine)
    block, operands, out = epilogue
    start = _fill_value(init)
    window = len(inputs)
    if start is None:  # the accumulator's initial value (a broadcast bias) is read
        inputs, maps = inputs + [init], maps + [_identity(rank)]
    inputs += [v for v, _ in operands if v is not None]
    maps += [m for v, m in operands if v is not None] + [_identity(rank)]

    def body(*scalars):
        acc = combine(list(scalars[:window]), start if start is not None else scalars[window])
        rest = iter(scalars[window + (start is None):-1])
        values = {arg: acc if value is None else next(rest) for arg, (value, _) in zip(block.arguments, operands)}
        values[block.arguments[len(block.arguments) - 1]] = scalars[-1]
        return inline_body(block, values)

    return generic(inputs, maps, [out], body, ["parallel"] * rank)[0]


# Ops (not counting the yield) of an epilogue the window's generic computes too.
CHEAP_EPILOGUE_OPS = 4


def taken_epilogue(op):
    """The element-wise consumer of the window ``op`` that its generic computes too, if
    any: a cheap one (bias + ReLU6: 3 ops), saving a pass over the output. An
    expensive one (SiLU, its exp approximated: ~25 ops) stays apart, where it runs on
    whole vectors of the flattened output, not on rows ending in a masked vector.
    Measured (AVX-512, one thread, against onnxruntime): SiLU in the generic of 1152
    channels of 3x3 took 6.6x onnxruntime's time, apart 3.4x; of 240 channels of 28x28
    (5x5) 1.98x, apart 1.72x; ReLU6 on 960 channels of 3x3: 0.82x in, 0.95x apart."""
    epilogue = elementwise_consumer(op)
    if epilogue is None:
        return None
    ops = len(list(epilogue.regions[0].blocks[0].operations)) - 1
    return epilogue if ops <= CHEAP_EPILOGUE_OPS else None


def replace_window(op, epilogue, build):
    """Replace ``op`` and its ``epilogue`` (the consumer its rewrite computes too, or
    None) by the result of ``build()``, built where the last of them was."""
    root = epilogue if epilogue is not None else op
    with ir.InsertionPoint(root), root.location:
        result = build()
    root.results[0].replace_all_uses_with(result)
    if epilogue is not None:
        epilogue.erase()
    op.erase()


def consumer_epilogue(op, epilogue):
    """``window_generic``'s ``epilogue`` for the element-wise ``epilogue`` consuming ``op``."""
    if epilogue is None:
        return None
    operands = [(None if v == op.results[0] else v, m) for v, m in zip(linalg_inputs(epilogue), indexing_maps(epilogue))]
    return epilogue.regions[0].blocks[0], operands, linalg_init(epilogue)


def _taps(op, kind: str, epilogue=None):
    """The unrolled window: one element-wise generic over the output; with ``epilogue``
    (its element-wise consumer), that too."""
    out_shape = static_tensor_type(op.operands[2]).shape
    strides, dilations = conv_params(op)
    taps = tap_slices(op.operands[0], out_shape, window_of(op), strides, dilations)
    weights = op.operands[1] if op.name == DEPTHWISE else None
    return window_generic(kind, taps, weights, op.operands[2], consumer_epilogue(op, epilogue))


def _global(op, kind: str):
    """A pooling whose window is the whole input: a reduction over (h, w) into the
    output collapsed to ``[N, C]``."""
    tensor = _mlir.tensor
    out_t = static_tensor_type(op.results[0])
    n, c = out_t.shape[:2]
    image_dims = reassociation([[0], [1, 2, 3]])
    init = tensor.collapse_shape(ir.RankedTensorType.get([n, c], out_t.element_type), op.operands[2], image_dims)
    dims = [ir.AffineDimExpr.get(d) for d in range(4)]
    maps = [ir.AffineMap.get(4, 0, dims), ir.AffineMap.get(4, 0, dims[:2])]

    def body(args, acc):
        return _combine(kind, acc, args[0])

    reduced = _generic([op.operands[0]], maps, init, ["parallel", "parallel", "reduction", "reduction"], body)
    return tensor.expand_shape(out_t, reduced, image_dims, [], list(out_t.shape))


def windows_to_taps(module: ir.Module) -> int:
    """Rewrite f32 NCHW pooling and depthwise convolutions (see the module docstring).
    Returns how many ops were rewritten."""
    count = 0
    for op in linalg_ops(module):
        if op.name not in POOLING and op.name != DEPTHWISE or len(op.results) != 1:
            continue
        x_t, out_t = static_tensor_type(op.operands[0]), static_tensor_type(op.results[0])
        if x_t is None or out_t is None or static_tensor_type(op.operands[1]) is None or not (is_f32(x_t) and is_f32(out_t)):
            continue
        kind = POOLING.get(op.name, "sum")
        kh, kw = window_of(op)
        _, (dh, dw) = conv_params(op)
        whole = op.name != DEPTHWISE and tuple(out_t.shape[2:]) == (1, 1) and tuple(x_t.shape[2:]) == (kh, kw) and (dh, dw) == (1, 1)
        if not whole and kh * kw > MAX_TAPS:
            continue
        if whole:
            replace_window(op, None, lambda: _global(op, kind))
        else:
            epilogue = taken_epilogue(op)
            replace_window(op, epilogue, lambda: _taps(op, kind, epilogue=epilogue))
        count += 1
    return count


__all__ = ["DEPTHWISE", "POOLING", "consumer_epilogue", "phase_width", "replace_window", "taken_epilogue", "tap_slices",
           "window_generic", "window_of", "windows_to_taps"]
