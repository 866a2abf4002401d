"""ONNX normalizations without an ECG op of their own, imported as reductions and
element-wise ECG ops (RMSNormalization, LpNormalization, MeanVarianceNormalization,
GroupNormalization): the reductions and the element-wise epilogue then fuse as
layer normalization's parts do.
"""

import numpy as np

from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import dtype_name, element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter


def _in_stash_type(node: NodeBuilder, x):
    """``x`` cast to the stash type (float32 unless stash_type says double) when that differs."""
    stash = np.dtype(np.float64 if node.attr("stash_type", 1) == 11 else np.float32)
    return x if node.spec(x).dtype == stash else node.emit_one("cast", [x], to=dtype_name(stash))


def _to(node: NodeBuilder, x, dtype):
    return x if node.spec(x).dtype == dtype else node.emit_one("cast", [x], to=dtype_name(dtype))


def _float_input(node: NodeBuilder):
    x = node.operand(0)
    if element_kind(node.spec(x).dtype) != "f":
        node.unsupported(f"{node.info.op_type} on {dtype_name(node.spec(x).dtype)} tensors (floating-point only)")
    return x, node.spec(x)


@converter("RMSNormalization")
def _rms_normalization(node: NodeBuilder):
    """x / sqrt(mean(x**2 over axis..) + epsilon) * scale, the statistics in the stash type."""
    x, spec = _float_input(node)
    axis = normalize_axis(node.attr("axis", -1), spec.rank)
    stashed = _in_stash_type(node, x)
    stash = node.spec(stashed).dtype
    mean_square = node.emit_one("reduce_mean", [node.emit_one("mul", [stashed, stashed])],
                                axes=list(range(axis, spec.rank)), keepdims=1)
    rms = node.emit_one("sqrt", [node.emit_one("add", [mean_square, np.array(node.attr("epsilon", 1e-5), stash)])])
    normalized = _to(node, node.emit_one("mul", [stashed, node.emit_one("reciprocal", [rms])]), spec.dtype)
    return node.emit("mul", [normalized, node.operand(1)])


@converter("LpNormalization")
def _lp_normalization(node: NodeBuilder):
    """x / ||x||_p along axis (p = 1 or 2); 0 where the norm is 0."""
    x, spec = _float_input(node)
    p = node.attr("p", 2)
    if p not in (1, 2):
        node.unsupported(f"p = {p} (1 or 2 only)")
    axis = normalize_axis(node.attr("axis", -1), spec.rank)
    norm = node.emit_one("reduce_l1" if p == 1 else "reduce_l2", [x], axes=[axis], keepdims=1)
    zero = np.zeros((), spec.dtype)
    is_zero = node.emit_one("equal", [norm, zero])
    return node.emit("where", [is_zero, zero, node.emit_one("div", [x, norm])])


@converter("MeanVarianceNormalization")
def _mean_variance_normalization(node: NodeBuilder):
    """(x - E[x]) / (sqrt(E[x**2] - E[x]**2) + 1e-9) over ``axes``, as the function body computes it."""
    x, spec = _float_input(node)
    axes = [normalize_axis(a, spec.rank) for a in node.attr("axes", [0, 2, 3])]
    mean = node.emit_one("reduce_mean", [x], axes=axes, keepdims=1)
    mean_of_squares = node.emit_one("reduce_mean", [node.emit_one("mul", [x, x])], axes=axes, keepdims=1)
    variance = node.emit_one("sub", [mean_of_squares, node.emit_one("mul", [mean, mean])])
    deviation = node.emit_one("add", [node.emit_one("sqrt", [variance]), np.array(1e-9, spec.dtype)])
    return node.emit("div", [node.emit_one("sub", [x, mean]), deviation])


@converter("GroupNormalization")
def _group_normalization(node: NodeBuilder):
    """Layer normalization of each group of channels (N, G, C/G * spatial), then a per-channel
    scale and bias (per group before opset 21, repeated to the group's channels)."""
    x, spec = _float_input(node)
    groups = node.attr("num_groups")
    if spec.rank < 2 or groups is None or groups <= 0 or spec.shape[1] % groups:
        node.unsupported(f"{groups} groups of the {spec.shape[1:2]} channels of {spec}")
    n, c = spec.shape[:2]
    grouped = node.emit_one("reshape", [_in_stash_type(node, x)], shape=[n, groups, spec.numel // (n * groups)])
    stash = node.spec(grouped).dtype
    mean = node.emit_one("reduce_mean", [grouped], axes=[2], keepdims=1)
    centered = node.emit_one("sub", [grouped, mean])
    variance = node.emit_one("reduce_mean", [node.emit_one("mul", [centered, centered])], axes=[2], keepdims=1)
    std = node.emit_one("sqrt", [node.emit_one("add", [variance, np.array(node.attr("epsilon", 1e-5), stash)])])
    normalized = node.emit_one("reshape", [node.emit_one("div", [centered, std])], shape=list(spec.shape))
    normalized = _to(node, normalized, spec.dtype)
    channel_shape = [c] + [1] * (spec.rank - 2)
    affine = []
    for index in (1, 2):
        value = node.operand(index)
        if node.spec(value).shape == (groups,) and groups != c:  # opset 18: one value per group
            value = node.emit_one("expand", [node.emit_one("reshape", [value], shape=[groups, 1])],
                                  shape=[groups, c // groups])
        affine.append(node.emit_one("reshape", [value], shape=channel_shape))
    return node.emit("add", [node.emit_one("mul", [normalized, affine[0]]), affine[1]])
