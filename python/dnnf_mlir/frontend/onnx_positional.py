"""ONNX ops whose result depends on element positions, imported as existing ECG ops with
constant masks and matrices: Trilu (a select against a triangular mask), CumSum (a
contraction with a triangular matrix of ones: one ``mat_mul``, the fast path of both code
generators, rather than a sequential scan; in blocks along a long axis), Hardmax and OneHot
(a comparison with the positions along an axis).
"""

import math

import numpy as np

from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import dtype_name, element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError


def _scalar(node: NodeBuilder, index: int, what: str, default=None) -> int:
    value = node.known(index, what)
    if value is None:
        if default is None:
            raise OnnxImportError(f"{node.info}: input {index} ({what}) is missing")
        return default
    if value.size != 1:
        raise OnnxImportError(f"{node.info}: input {index} ({what}) must be a scalar, got shape {list(value.shape)}")
    return int(value.reshape(()))


def _positions(extent: int, axis: int, rank: int) -> np.ndarray:
    """0, 1, ..., extent-1 along ``axis`` of a rank-``rank`` tensor (size 1 on the other axes)."""
    shape = [1] * rank
    shape[axis] = extent
    return np.arange(extent, dtype=np.int64).reshape(shape)


@converter("Trilu")
def _trilu(node: NodeBuilder):
    """x where the element is on or above (upper) / below (lower) diagonal k, else 0."""
    x = node.operand(0)
    spec = node.spec(x)
    if spec.rank < 2:
        raise OnnxImportError(f"{node.info}: the input must have rank >= 2, got {spec}")
    k = _scalar(node, 1, "k", 0)
    rows, columns = spec.shape[-2:]
    keep = (np.triu if node.attr("upper", 1) else np.tril)(np.ones((rows, columns), np.bool_), k)
    return node.emit("where", [keep, x, np.zeros((), spec.dtype)])


# An axis at least this long is summed in blocks of about sqrt(n) elements: one
# contraction within the blocks and one over their totals, O(n sqrt n) work instead of
# O(n^2), and no (n, n) constant (64 MiB at n = 4096).
BLOCKED_FROM = 128


def _enters(n: int, reverse: bool, exclusive: bool) -> np.ndarray:
    """T[j, i]: whether element j of n enters running result i (j <= i; j < i when exclusive;
    mirrored when reversed)."""
    before, after = np.arange(n)[:, None], np.arange(n)[None, :]
    enters = before >= after if reverse else before <= after
    return enters & (before != after) if exclusive else enters


def _directions(node: NodeBuilder) -> tuple:
    """(reverse, exclusive) of a CumSum / CumProd node."""
    return bool(node.attr("reverse", 0)), bool(node.attr("exclusive", 0))


def _running_sums(node: NodeBuilder, x, n: int, reverse: bool, exclusive: bool, last: bool):
    """Running sums along axis 1 of ``x`` ([outer, n] when ``last``, else [outer, n, inner]),
    as one contraction with T: x @ T along the last axis, T^T @ x along the one before."""
    enters = _enters(n, reverse, exclusive).astype(node.spec(x).dtype)
    return node.emit_one("mat_mul", [x, enters] if last else [enters.T, x])


def _blocked_running_sums(node: NodeBuilder, x, n: int, reverse: bool, exclusive: bool, last: bool):
    """``_running_sums`` in blocks: the sums within each block, plus the totals of the
    blocks before it (after it, reversed). The axis is zero-padded to whole blocks: the
    zeros past its end add nothing to any sum."""
    spec = node.spec(x)
    outer, inner = spec.shape[0], list(spec.shape[2:])
    block = math.isqrt(n - 1) + 1
    count = -(-n // block)
    if count * block > n:
        x = node.emit_one("concat", [x, np.zeros([outer, count * block - n, *inner], spec.dtype)], axis=1)
    blocks = node.emit_one("reshape", [x], shape=[outer, count, block, *inner])
    within = _running_sums(node, blocks, block, reverse, exclusive, last)
    totals = node.emit_one("reduce_sum", [blocks], axes=[2], keepdims=0)
    carries = _running_sums(node, totals, count, reverse, True, last)
    sums = node.emit_one("add", [within, node.emit_one("unsqueeze", [carries], axes=[2])])
    sums = node.emit_one("reshape", [sums], shape=[outer, count * block, *inner])
    if count * block == n:
        return sums
    return node.emit_one("slice", [sums], starts=[0], ends=[n], axes=[1], steps=[1])


@converter("CumSum")
def _cumsum(node: NodeBuilder):
    """Running sums: one contraction with T (T[j, i] = 1 where element j enters sum i) over
    the input viewed as [outer, n, inner] (no transposes), in blocks along a long axis."""
    x = node.operand(0)
    spec = node.spec(x)
    if element_kind(spec.dtype) not in "fiu":
        node.unsupported(f"CumSum on {dtype_name(spec.dtype)} tensors")
    axis = normalize_axis(_scalar(node, 1, "axis"), spec.rank)
    n = spec.shape[axis]
    outer, inner = math.prod(spec.shape[:axis]), math.prod(spec.shape[axis + 1:])
    last = inner == 1
    x = node.emit_one("reshape", [x], shape=[outer, n] if last else [outer, n, inner])
    sums = _blocked_running_sums if n >= BLOCKED_FROM else _running_sums
    result = sums(node, x, n, *_directions(node), last)
    return node.emit("reshape", [result], {"shape": list(spec.shape)})


def _running_product(node: NodeBuilder, combine):
    """A running product along input 1's axis: ``combine(x', n)`` on x' with the axis (of
    extent n) last; the result's axis moved back."""
    x = node.operand(0)
    spec = node.spec(x)
    if element_kind(spec.dtype) not in "fiu":
        node.unsupported(f"{node.info.op_type} on {dtype_name(spec.dtype)} tensors")
    axis = normalize_axis(_scalar(node, 1, "axis"), spec.rank)
    perm = [a for a in range(spec.rank) if a != axis] + [axis]
    moved = x if axis == spec.rank - 1 else node.emit_one("transpose", [x], perm=perm)
    result = combine(moved, spec.shape[axis])
    if axis == spec.rank - 1:
        return [result]
    return node.emit("transpose", [result], {"perm": list(np.argsort(perm))})


@converter("CumProd")
def _cumprod(node: NodeBuilder):
    """Running products: y[.., i] = prod over j of (x'[.., j] where T[j, i] else 1), a select and a
    product reduction."""
    rank = node.spec(node.operand(0)).rank
    one = np.ones((), node.spec(node.operand(0)).dtype)

    def combine(moved, n):
        columns = node.emit_one("unsqueeze", [moved], axes=[rank])  # (..., j, 1) against T (j, i)
        factors = node.emit_one("where", [_enters(n, *_directions(node)), columns, one])
        return node.emit_one("reduce_prod", [factors], axes=[rank - 1], keepdims=0)

    return _running_product(node, combine)


@converter("Hardmax")
def _hardmax(node: NodeBuilder):
    """1 at the first maximum along ``axis``, 0 elsewhere (before opset 13 over the input
    coerced to 2-D at ``axis``)."""
    x = node.operand(0)
    spec = node.spec(x)
    if element_kind(spec.dtype) != "f":
        node.unsupported(f"Hardmax on {dtype_name(spec.dtype)} tensors (floating-point only)")
    if node.opset < 13:
        axis = normalize_axis(node.attr("axis", 1), spec.rank)
        rows = int(np.prod(spec.shape[:axis], dtype=np.int64))
        x = node.emit_one("reshape", [x], shape=[rows, spec.numel // max(rows, 1)])
    axis = normalize_axis(node.attr("axis", -1), node.spec(x).rank) if node.opset >= 13 else 1
    shape = node.spec(x).shape
    first = node.emit_one("arg_max", [x], axis=axis, keepdims=1)
    hot = node.emit_one("equal", [first, _positions(shape[axis], axis, len(shape))])
    result = node.emit_one("cast", [hot], to=dtype_name(spec.dtype))
    return node.emit("reshape", [result], {"shape": list(spec.shape)}) if node.opset < 13 else [result]


@converter("OneHot")
def _one_hot(node: NodeBuilder):
    """values[1] where the (wrapped) index equals the position along the new ``axis``, values[0]
    elsewhere; an index outside [-depth, depth) matches nothing."""
    indices, values = node.operand(0), node.operand(2)
    depth = node.required(1, "depth")
    if depth.size != 1 or depth.reshape(()) < 1:
        raise OnnxImportError(f"{node.info}: depth must be a positive scalar, got {depth.tolist()}")
    depth = int(depth.reshape(()))
    if node.spec(values).shape != (2,):
        raise OnnxImportError(f"{node.info}: values must be [off_value, on_value], got {node.spec(values)}")
    rank = node.spec(indices).rank + 1
    axis = normalize_axis(node.attr("axis", -1), rank)
    if node.spec(indices).dtype != np.int64:  # float indices truncate toward zero, as onnxruntime does
        indices = node.emit_one("cast", [indices], to="i64")
    negative = node.emit_one("less", [indices, np.array(0, np.int64)])
    wrapped = node.emit_one("where", [negative, node.emit_one("add", [indices, np.array(depth, np.int64)]), indices])
    hot = node.emit_one("equal", [node.emit_one("unsqueeze", [wrapped], axes=[axis]), _positions(depth, axis, rank)])
    off = node.emit_one("slice", [values], starts=[0], ends=[1], axes=[0], steps=[1])
    on = node.emit_one("slice", [values], starts=[1], ends=[2], axes=[0], steps=[1])
    return node.emit("where", [hot, on, off])


@converter("CenterCropPad")
def _center_crop_pad(node: NodeBuilder):
    """Each of ``axes`` cropped or zero-padded to the given extent around its centre (the
    extra element of an odd difference at the end): a slice and a pad."""
    x = node.operand(0)
    spec = node.spec(x)
    extents = node.required(1, "shape").tolist()
    axes = [normalize_axis(a, spec.rank) for a in node.attr("axes", list(range(spec.rank)))]
    if len(axes) != len(extents):
        raise OnnxImportError(f"{node.info}: {len(extents)} extents for {len(axes)} axes")
    starts, ends, pads = [], [], [0] * (2 * spec.rank)
    for axis, extent in zip(axes, extents):
        size = spec.shape[axis]
        starts.append((size - extent) // 2 if extent < size else 0)
        ends.append(starts[-1] + min(extent, size))
        if extent > size:
            pads[axis], pads[axis + spec.rank] = (extent - size) // 2, extent - size - (extent - size) // 2
    x = node.emit_one("slice", [x], starts=starts, ends=ends, axes=axes, steps=[1] * len(axes))
    return node.emit("pad", [x], {"pads": pads}) if any(pads) else [x]


@converter("ReverseSequence")
def _reverse_sequence(node: NodeBuilder):
    """Each batch entry's first sequence_lens[b] steps reversed: one gather_elements along the
    time axis at index lens[b] - 1 - t for t < lens[b], else t."""
    x = node.operand(0)
    spec = node.spec(x)
    batch_axis, time_axis = node.attr("batch_axis", 1), node.attr("time_axis", 0)
    if spec.rank < 2 or {batch_axis, time_axis} != {0, 1}:
        raise OnnxImportError(f"{node.info}: batch_axis and time_axis must be 0 and 1, of an input of rank >= 2")
    lens_shape = [1] * spec.rank
    lens_shape[batch_axis] = spec.shape[batch_axis]
    lengths = node.emit_one("reshape", [node.operand(1)], shape=lens_shape)
    if node.spec(lengths).dtype != np.int64:
        lengths = node.emit_one("cast", [lengths], to="i64")
    steps = _positions(spec.shape[time_axis], time_axis, spec.rank)
    reversed_steps = node.emit_one("sub", [node.emit_one("sub", [lengths, np.array(1, np.int64)]), steps])
    index = node.emit_one("where", [node.emit_one("less", [steps, lengths]), reversed_steps, steps])
    index = node.emit_one("expand", [index], shape=list(spec.shape))
    return node.emit("gather_elements", [x, index], {"axis": time_axis})


@converter("AffineGrid")
def _affine_grid(node: NodeBuilder):
    """theta (N, r, r + 1) applied to the homogeneous coordinates of every output position
    (a constant (positions, r + 1) matrix): one batched mat_mul."""
    theta = node.operand(0)
    spec = node.spec(theta)
    size = [int(v) for v in node.required(1, "size").tolist()]
    spatial = size[2:]
    rank = len(spatial)
    if rank not in (2, 3) or spec.shape != (size[0], rank, rank + 1) or element_kind(spec.dtype) != "f":
        raise OnnxImportError(f"{node.info}: theta {spec} does not fit size {size}")
    align = node.attr("align_corners", 0)
    axes = [np.linspace(-1, 1, n) if align else (2 * np.arange(n) + 1) / n - 1 for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # per spatial axis (D,) H, W
    coordinates = [m.reshape(-1) for m in mesh[::-1]] + [np.ones(int(np.prod(spatial)))]  # x, y, (z,) 1
    base = np.stack(coordinates, axis=1).astype(spec.dtype)[None]  # (1, positions, r + 1)
    grid = node.emit_one("mat_mul", [base, node.emit_one("transpose", [theta], perm=[0, 2, 1])])
    return node.emit("reshape", [grid], {"shape": [size[0], *spatial, rank]})
