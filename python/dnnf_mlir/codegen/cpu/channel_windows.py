"""A LRN's sums of squares as one element-wise generic over the window's channel taps.

The LRN lowers to its squares padded along channels and a reduction generic summing
``size`` of them (``(n, c, h, w, k) -> (n, c + k, h, w)``, ``is_channel_window``). Its
reduction loop is innermost, so the generic schedule left it scalar: a load, an add and
a store of the accumulator per tap and element (AlexNet's 96x54x54 LRN: 0.42 ms, 15% of
the memory bandwidth its bytes need). ``channel_window_taps`` rewrites it as
``windows.window_generic`` does a pooling's window: one element-wise generic over the
output reading ``size`` slices of the padded squares, channel ``c + k`` for tap ``k``,
summed in the same order from the same zero, which the element-wise schedule vectorizes
along the rows.

The ``tensor.pad`` of the squares became a buffer filled with zeros element by element
(scalar stores) and the squares copied into it. Here only its ``before`` and ``after``
margin channels are filled, and the squares' generic writes the channels between them
in place (its init a slice of the padded tensor) where the pad was its only reader.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import insert_at, slice_at
from ..linalg_queries import (channel_pad, is_channel_window, linalg_init, linalg_ops, only_user, producer,
                              set_linalg_init, static_tensor_type)
from .windows import window_generic


def _channel_taps(padded, out_shape: list, size: int) -> list:
    """Tap ``k`` of the window: channels ``k`` to ``k + C`` of ``padded``."""
    out_t = ir.RankedTensorType.get(out_shape, static_tensor_type(padded).element_type)
    return [_mlir.tensor.extract_slice(out_t, padded, [], [], [], [0, k, 0, 0], out_shape, [1, 1, 1, 1])
            for k in range(size)]


def _writes_own_init(op) -> bool:
    """Whether ``op`` is a single-result linalg op whose init is a ``tensor.empty`` (its
    values never read), so that any tensor of its type can take that place."""
    init = producer(linalg_init(op)) if op.name.startswith("linalg.") and len(op.results) == 1 else None
    return init is not None and init.name == "tensor.empty"


def _margin_padded(pad):
    """The ``channel_pad`` ``pad`` as a tensor whose margin channels are filled with zeros
    and whose other channels are its source, computed there by the source's producer
    where the pad is its only reader, else copied; built where ``pad`` is."""
    before, after = channel_pad(pad)
    source = pad.operands[0]
    n, c, h, w = static_tensor_type(source).shape
    element = static_tensor_type(source).element_type
    tensor = _mlir.tensor
    maker = producer(source)
    in_place = maker is not None and _writes_own_init(maker) and only_user(source) == pad
    with ir.InsertionPoint(maker if in_place else pad), pad.location:
        padded = tensor.empty([n, before + c + after, h, w], element)
        if in_place:
            set_linalg_init(maker, slice_at(padded, [0, before, 0, 0], [n, c, h, w]))
    with ir.InsertionPoint(pad), pad.location:
        padded = insert_at(source, padded, [0, before, 0, 0])
        zero = _mlir.arith.constant(element, 0.0)
        for first, count in ((0, before), (before + c, after)):
            if count:
                margin = _mlir.linalg.fill(zero, outs=[slice_at(padded, [0, first, 0, 0], [n, count, h, w])])
                padded = insert_at(margin, padded, [0, first, 0, 0])
    return padded


def channel_window_taps(module: ir.Module) -> int:
    """Rewrite each ``is_channel_window`` generic of ``module`` as an element-wise generic
    over its taps; returns how many were rewritten."""
    rewritten = 0
    for op in linalg_ops(module):
        if not is_channel_window(op):
            continue
        out_shape = list(static_tensor_type(op.results[0]).shape)
        size = static_tensor_type(op.operands[1]).shape[0]
        pad = producer(op.operands[0])
        padded = _margin_padded(pad)
        with ir.InsertionPoint(op), op.location:
            result = window_generic("sum", _channel_taps(padded, out_shape, size), None, linalg_init(op))
        op.results[0].replace_all_uses_with(result)
        op.erase()
        if not list(pad.results[0].uses):
            pad.erase()
        rewritten += 1
    return rewritten


__all__ = ["channel_window_taps"]
