"""Pooling pulled through what makes its input: a concat along channels and, for max
pooling, a non-decreasing element-wise op such as ReLU.

SqueezeNet's fire modules end in ``relu(a)``, ``relu(b)``, a concat along channels and a
3x3/2 max pool; Inception's blocks in a concat and a max pool. Lowered as they come,
each ReLU is a pass over its input, the concat a copy of both, and only then does the
pool read the concat: three passes over the 128x55x55 tensor before the one that
counts. Pooling works channel by channel, so the pool of a concat along channels is
the concat of the pools of its parts (each part padded as the concat was); and
``max(f(x), f(y)) = f(max(x, y))`` for a non-decreasing ``f``, so ReLU (any chain of
max / min with values from outside, ReLU6 and clips too) moves past a max pool to its
output, a quarter of the size for a stride of 2, where the pool's channel loop
applies it in registers (``windows.taken_epilogue``). NaN stays NaN both ways (max and
min propagate it). ``pools_through_inputs`` rewrites in that order, so that each part's
pool reads the concat's operand, not a copy of it.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import insert_at, make_pad, slice_at, with_operands
from ..linalg_queries import conv_params, indexing_maps, linalg_inputs, linalg_ops, producer, static_tensor_type
from .depthwise import static_pad
from .windows import POOLING, replace_window

# Only the NaN-propagating forms: with maxnumf, relu(NaN) = 0 while the pool of [NaN, 5]
# is NaN, so the pool of [relu(NaN), relu(5)] = 5 would become relu(NaN) = 0.
MONOTONE = {"arith.maximumf", "arith.minimumf"}
POOL_BUILDERS = {"linalg.pooling_nchw_max": "pooling_nchw_max", "linalg.pooling_nchw_sum": "pooling_nchw_sum"}


def _channel_parts(value) -> list:
    """The operands of the ``tensor.concat`` along channels (dim 1) that makes ``value``, else []."""
    concat = producer(value)
    if concat is None or concat.name != "tensor.concat" or ir.IntegerAttr(concat.attributes["dim"]).value != 1:
        return []
    return list(concat.operands)


def _non_decreasing(op) -> bool:
    """Whether ``op`` is an element-wise generic of one input and its init, both read
    whole, whose body is a chain of max / min of that input with values from outside
    (ReLU, ReLU6, a clip): a non-decreasing function of the input."""
    if op is None or op.name != "linalg.generic" or len(linalg_inputs(op)) != 1 or len(op.results) != 1:
        return False
    identity = ir.AffineMap.get_identity(static_tensor_type(op.results[0]).rank)
    if any(m != identity for m in indexing_maps(op)):
        return False
    block = op.regions[0].blocks[0]
    inside = {block.arguments[0]}
    for body_op in block.operations:
        if body_op.name == "linalg.yield":
            return len(body_op.operands) == 1 and body_op.operands[0] in inside
        if body_op.name not in MONOTONE or not any(v in inside for v in body_op.operands):
            return False
        if any(isinstance(v, ir.BlockArgument) and v.owner == block and v not in inside for v in body_op.operands):
            return False  # reads the init
        inside.add(body_op.results[0])
    return False


def _pool(op, x, init):
    """A copy of the pooling ``op`` over the input ``x`` into ``init``."""
    strides, dilations = conv_params(op)
    builder = getattr(_mlir.linalg, POOL_BUILDERS[op.name])
    return builder(x, op.operands[1], outs=[init], strides=strides, dilations=dilations)


def _channels(value, channel: int, channels: int):
    """Channels ``[channel, channel + channels)`` of the NCHW tensor ``value``."""
    shape = static_tensor_type(value).shape
    return slice_at(value, [0, channel, 0, 0], [shape[0], channels, *shape[2:]])


def _pool_of_parts(op, parts, low, high, value):
    """``op`` over the concat of ``parts`` padded by ``low`` / ``high`` with ``value``:
    each part padded, pooled into its channels of the result and the result's
    non-decreasing producer applied after its pool."""
    tensor = _mlir.tensor
    out_t = static_tensor_type(op.results[0])
    result, channel = tensor.empty(list(out_t.shape), out_t.element_type), 0
    for part in parts:
        channels = static_tensor_type(part).shape[1]
        y = _pool_of(op, part, low, high, value, _part_init(op.operands[2], channel, channels),
                     _channels(result, channel, channels))
        result = insert_at(y, result, [0, channel, 0, 0])
        channel += channels
    return result


def _part_init(init, channel: int, channels: int):
    """Channels ``[channel, channel + channels)`` of a pool's ``init``: a fill of their
    own where ``init`` is a fill (which the window's generic starts from in registers)."""
    fill = producer(init)
    if fill is None or fill.name != "linalg.fill":
        return _channels(init, channel, channels)
    t = static_tensor_type(init)
    empty = _mlir.tensor.empty([t.shape[0], channels, *t.shape[2:]], t.element_type)
    return _mlir.linalg.fill(fill.operands[0], outs=[empty])


def _pool_of(op, x, low, high, value, init, dest=None):
    """``op`` over ``x`` padded by ``low`` / ``high`` with ``value`` into ``init``; a max
    pool over a non-decreasing op's result pools the op's input and applies the op after,
    into ``dest`` (a fresh tensor if None)."""
    moved = producer(x) if op.name == "linalg.pooling_nchw_max" and _non_decreasing(producer(x)) else None
    source = linalg_inputs(moved)[0] if moved is not None else x
    if any(low + high):
        if not isinstance(value, ir.Value):
            value = _mlir.arith.constant(static_tensor_type(source).element_type, value)
        source = make_pad(source, low, high, value)
    y = _pool(op, source, init)
    if moved is None:
        return y
    identity = ir.AffineMap.get_identity(4)
    out_t = static_tensor_type(y)
    if dest is None:
        dest = _mlir.tensor.empty(list(out_t.shape), out_t.element_type)
    return with_operands(moved, [y], [identity, identity], [dest])[0]


def pools_through_inputs(module: ir.Module) -> int:
    """Rewrite every static f32 NCHW pooling over a channel concat or (max pooling) a
    non-decreasing element-wise op (see the module docstring). Returns how many."""
    count = 0
    for op in linalg_ops(module):
        if op.name not in POOLING or len(op.results) != 1 or static_tensor_type(op.results[0]) is None:
            continue
        source, low, high, value = static_pad(op)
        parts = _channel_parts(source)
        moves = op.name == "linalg.pooling_nchw_max" and _non_decreasing(producer(source))
        if not parts and not moves:
            continue
        if parts:
            replace_window(op, None, lambda: _pool_of_parts(op, parts, low, high, value))
        else:
            replace_window(op, None, lambda: _pool_of(op, source, low, high, value, op.operands[2]))
        count += 1
    return count


__all__ = ["pools_through_inputs"]
