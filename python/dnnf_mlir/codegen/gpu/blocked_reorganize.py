"""The layout-tolerant ops of a blocked kernel besides its convolution and element-wise
ops: spatial pads, max / average pooling, concatenation and slices along channels, and
the flattening of a global pooling's ``[N, C, 1, 1]``; each computed in NC4HW4
(``nc4hw4.py``) so that a run of blocked kernels goes through them without a copy back
to NCHW (SqueezeNet's fire modules, Inception's branches, ResNet's pooling).

``tolerated(op, activations)`` says whether such an op reading the values
``activations`` can be computed blocked; ``blocked_op(op, layouts)`` builds it, with
``layouts`` mapping each activation to (tensor, whether blocked) and returning the
same for its result: blocked None for a global pooling's ``[N, C]`` (a ``linalg.reduce``
over rows and columns, or the collapse of ``[N, C, 1, 1]``), NCHW's own value, which
the ops after it read as they are.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, generic, with_operands
from ..linalg_queries import conv_params, pad_fill, producer, reassociation_groups, static_slice
from .nc4hw4 import BLOCK, activation_map, blocked_init, blocks, is_activation, materialized, read

POOLINGS = ("linalg.pooling_nchw_max", "linalg.pooling_nchw_sum")
FLATTENING = ("linalg.reduce", "tensor.collapse_shape")  # a global pooling's [N, C], NCHW's own
REORGANIZING = ("tensor.pad", "tensor.concat", "tensor.extract_slice") + FLATTENING + POOLINGS


def _channels(value) -> int:
    return ir.RankedTensorType(value.type).shape[1]


def _spatial_pad(pad) -> tuple[list, list] | None:
    """The (low, high) spatial amounts of a ``tensor.pad`` of rows and columns only, else None."""
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if len(low) != 4 or low[:2] != [0, 0] or high[:2] != [0, 0] or min(low + high) < 0 or pad_fill(pad) is None:
        return None
    return low[2:], high[2:]


def _channel_slice(op) -> int | None:
    """The first channel of a ``tensor.extract_slice`` taking whole pixels of a block-aligned
    run of channels, else None."""
    static = static_slice(op)
    if static is None or not is_activation(op.results[0].type):
        return None
    offsets, sizes, strides = static
    source = ir.RankedTensorType(op.operands[0].type).shape
    whole = [sizes[0], sizes[2], sizes[3]] == [source[0], source[2], source[3]]
    if not whole or offsets[0] or offsets[2] or offsets[3] or any(s != 1 for s in strides) or offsets[1] % BLOCK:
        return None
    return offsets[1]


def tolerated(op, activations: set) -> bool:
    """Whether the op (one of ``REORGANIZING``) reads only ``activations`` and has a
    blocked form: a concatenation along channels whose inputs but the last fill their
    blocks (a partial block in the middle would shift the channels after it), a slice
    starting at a block, a sum over rows and columns or a collapse of ``[N, C, 1, 1]``
    to ``[N, C]`` (a global pooling)."""
    name = op.name
    if name == "tensor.pad":
        return op.operands[0] in activations and _spatial_pad(op) is not None
    if name in POOLINGS:
        fill = producer(op.operands[2])
        return op.operands[0] in activations and fill is not None and fill.name == "linalg.fill" and is_activation(
            op.results[0].type)
    if name == "tensor.concat":
        inputs = list(op.operands)
        return (ir.IntegerAttr(op.attributes["dim"]).value == 1 and all(v in activations for v in inputs)
                and all(_channels(v) % BLOCK == 0 for v in inputs[:-1]))
    if name == "tensor.extract_slice":
        return op.operands[0] in activations and _channel_slice(op) is not None
    if name == "linalg.reduce":
        fill = producer(op.operands[1])
        dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        return op.operands[0] in activations and dims == [2, 3] and fill is not None and fill.name == "linalg.fill"
    if name == "tensor.collapse_shape":  # a flattening: of [N, C, 1, 1], or of whole blocks (``_flattened``)
        shape = ir.RankedTensorType(op.operands[0].type).shape
        return (op.operands[0] in activations and (shape[2:] == [1, 1] or shape[1] % BLOCK == 0)
                and reassociation_groups(op) == [[0], [1, 2, 3]])
    return False


def _pooling(op, x, blocked: bool):
    """``op`` over ``(n, cb, oh, ow, ci | kh, kw)``, its body kept."""
    (sh, sw), (dh, dw) = conv_params(op)
    d = ir.AffineDimExpr.get
    x_map = activation_map(7, blocked, 1, 4, d(2) * sh + d(5) * dh, d(3) * sw + d(6) * dw)
    init = blocked_init(op.results[0], producer(op.operands[2]).operands[0])
    return with_operands(op, [x, op.operands[1]], [x_map, affine_map(7, [5, 6]), affine_map(7, [0, 1, 2, 3, 4])],
                         [init], ["parallel"] * 5 + ["reduction"] * 2)[0]


def _flattened(x, flat: ir.Type):
    """The blocked ``x`` (whole blocks) flattened to NCHW's ``[N, C*H*W]`` (``flat``): its
    blocks' lanes moved before the rows, in the kernel that computes it, so that a
    classifier's flattening reads the blocked pooling before it with no copy kernel."""
    n, cb, h, w, _ = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    moved = generic([x], [affine_map(5, [0, 1, 3, 4, 2]), affine_map(5, [0, 1, 2, 3, 4])],
                    [_mlir.tensor.empty([n, cb, BLOCK, h, w], element)], lambda v, _out: v)[0]
    return _mlir.tensor.collapse_shape(flat, moved, [[0], [1, 2, 3, 4]])


def blocked_op(op, layouts: dict) -> tuple:
    """The blocked form of the ``tolerated`` op: (its result, whether blocked)."""
    name = op.name
    source = layouts[op.operands[0]]
    if name == "tensor.pad":
        low, high = _spatial_pad(op)
        return read(*source, low, high, pad_fill(op))
    if name in POOLINGS:
        return _pooling(op, *read(*source)), True
    if name == "tensor.concat":
        inputs = [materialized(*layouts[v]) for v in op.operands]
        shape = list(ir.RankedTensorType(inputs[0].type).shape)
        shape[1] = sum(ir.RankedTensorType(v.type).shape[1] for v in inputs)
        result = ir.RankedTensorType.get(shape, ir.RankedTensorType(inputs[0].type).element_type)
        return _mlir.tensor.concat(result, 1, inputs), True
    x = materialized(*source)
    n, cb, h, w, _ = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    if name == "tensor.collapse_shape" and (h, w) != (1, 1):
        return _flattened(x, op.results[0].type), None
    if name == "tensor.extract_slice":
        sizes = [n, blocks(_channels(op.results[0])), h, w, BLOCK]
        offsets = [0, _channel_slice(op) // BLOCK, 0, 0, 0]
        sliced = ir.RankedTensorType.get(sizes, element)
        return _mlir.tensor.extract_slice(sliced, x, [], [], [], offsets, sizes, [1] * 5), True
    if name == "linalg.reduce":  # over (n, cb, ci | h, w), into [N, C/4, 4]
        sums = _mlir.tensor.empty([n, cb, BLOCK], element)
        init = _mlir.linalg.fill(producer(op.operands[1]).operands[0], outs=[sums])
        x = with_operands(op, [x], [affine_map(5, [0, 1, 3, 4, 2]), affine_map(5, [0, 1, 2])], [init],
                          ["parallel"] * 3 + ["reduction"] * 2)[0]
    # [N, C/4, 1, 1, 4] or [N, C/4, 4] as [N, C]: the blocks' channels in order, less those past C.
    groups = [[0], list(range(1, ir.RankedTensorType(x.type).rank))]
    flat = _mlir.tensor.collapse_shape(ir.RankedTensorType.get([n, cb * BLOCK], element), x, groups)
    shape = ir.RankedTensorType(op.results[0].type).shape
    return _mlir.tensor.extract_slice(op.results[0].type, flat, [], [], [], [0, 0], shape, [1, 1]), None


__all__ = ["FLATTENING", "POOLINGS", "REORGANIZING", "blocked_op", "tolerated"]
