"""Convolutions the ``conv_2d_nchw_fchw`` micro-kernel does not take as they come.

``split_grouped_convolutions``: ``conv_2d_ngchw_gfchw`` (ONNX Conv with a few groups,
e.g. AlexNet's 2) has no schedule of its own and would run as scalar loops (25x
slower than vectorized); each group becomes a ``conv_2d_nchw_fchw`` on its slices of
the input, the filters and the accumulator, which then gets the usual padding,
strided split and register tiling (1x1 ones, ShuffleNet's, become one
``batch_matmul`` instead).
"""

from __future__ import annotations

from .. import _mlir
from .._mlir import ir
from .schedule import _is_f32, _linalg_ops, _reassociation, _shaped

MAX_GROUPS = 8  # more groups (depthwise-like) would make too many small kernels


def _grouped_1x1_as_batch_matmul(op, strides):
    """A single-image 1x1 grouped convolution as ``W[G, F, C] @ X[G, C, OH*OW]``: one
    batched micro-kernel whatever the number of groups (ShuffleNet has 3 or 4)."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    x_t, w_t, out_t = _shaped(op.operands[0]), _shaped(op.operands[1]), _shaped(op.results[0])
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
        x = tensor.collapse_shape(ir.RankedTensorType.get([g, c, oh * ow], f32), x, _reassociation([[0, 1], [2], [3, 4]]))
        w = tensor.collapse_shape(ir.RankedTensorType.get([g, f, c], f32), op.operands[1], _reassociation([[0], [1], [2, 3, 4]]))
        init = op.operands[2]
        owner = init.owner if isinstance(init, ir.OpResult) else None
        if owner is not None and owner.name == "linalg.fill":
            c_init = linalg.fill(owner.operands[0], outs=[tensor.empty([g, f, oh * ow], f32)])
        else:
            c_init = tensor.collapse_shape(ir.RankedTensorType.get([g, f, oh * ow], f32), init, _reassociation([[0, 1], [2], [3, 4]]))
        product = linalg.batch_matmul(w, x, outs=[c_init])
        return tensor.expand_shape(out_t, product, _reassociation([[0, 1], [2], [3, 4]]), [], list(out_t.shape))


def split_grouped_convolutions(module: ir.Module) -> int:
    """Rewrite each f32 ``conv_2d_ngchw_gfchw``: 1x1 ones as a ``batch_matmul`` over
    the groups, others with at most ``MAX_GROUPS`` groups as one ``conv_2d_nchw_fchw``
    per group. Returns how many were rewritten."""
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in _linalg_ops(module):
        if op.name != "linalg.conv_2d_ngchw_gfchw" or len(op.results) != 1:
            continue
        x_t, w_t, out_t = _shaped(op.operands[0]), _shaped(op.operands[1]), _shaped(op.results[0])
        if x_t is None or w_t is None or out_t is None or not (_is_f32(x_t) and _is_f32(w_t) and _is_f32(out_t)):
            continue
        n, g, c, h, w = x_t.shape
        _, f, _, kh, kw = w_t.shape
        _, _, _, oh, ow = out_t.shape
        strides = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["strides"])]
        dilations = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["dilations"])]
        f32 = out_t.element_type
        if (n, kh, kw) == (1, 1, 1):
            result = _grouped_1x1_as_batch_matmul(op, strides)
            op.results[0].replace_all_uses_with(result)
            op.erase()
            count += 1
            continue
        if g > MAX_GROUPS:
            continue

        def group_slice(value, shape, dim, index):
            """Group ``index`` (along ``dim``) of ``value``, without the group dim."""
            offsets = [0] * (len(shape) + 1)
            offsets[dim] = index
            sizes = list(shape[:dim]) + [1] + list(shape[dim:])
            return tensor.extract_slice(
                ir.RankedTensorType.get(list(shape), f32), value, [], [], [], offsets, sizes, [1] * len(sizes)
            ), offsets, sizes

        with ir.InsertionPoint(op), op.location:
            result = op.operands[2]
            for index in range(g):
                x, _, _ = group_slice(op.operands[0], [n, c, h, w], 1, index)
                filters, _, _ = group_slice(op.operands[1], [f, c, kh, kw], 0, index)
                init, offsets, sizes = group_slice(result, [n, f, oh, ow], 1, index)
                conv = linalg.conv_2d_nchw_fchw(x, filters, outs=[init], strides=strides, dilations=dilations)
                result = tensor.insert_slice(conv, result, [], [], [], offsets, sizes, [1] * len(sizes))
        op.results[0].replace_all_uses_with(result)
        op.erase()
        count += 1
    return count


__all__ = ["split_grouped_convolutions"]
