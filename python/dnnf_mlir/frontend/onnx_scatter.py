"""ONNX ScatterElements (and Scatter-9/10), ScatterND and GatherND imported as existing ECG ops.

GatherND is one ``gather`` from the data flattened over its indexed axes, at the linear
index of each index tuple. The scatters become a one-hot match: ``match[k, n, ...]`` says
that update n goes to position k of the scattered axis (or of the flattened indexed
axes); each position takes the sum / product / max / min of the updates that match it
(a select and a reduction over n), and keeps its data where none does. Positions and
updates are compared all against all, so the intermediate has (positions x updates x
row) elements: a scatter whose intermediate exceeds ``MATCH_LIMIT`` elements is refused
with an error naming the node rather than compiled slowly.
"""

import numpy as np

from ..ecg.ops.common import shape_numel
from ..ecg.shapes import broadcast, normalize_axis
from ..ecg.tensor_spec import element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError

MATCH_LIMIT = 1 << 24
_REDUCTIONS = {"none": "reduce_sum", "add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max",
               "min": "reduce_min"}


def _wrapped(node: NodeBuilder, indices, extent):
    """Indices as int64, negative ones counted from ``extent`` (a number or an int64 array)."""
    if node.spec(indices).dtype != np.int64:
        indices = node.emit_one("cast", [indices], to="i64")
    negative = node.emit_one("less", [indices, np.array(0, np.int64)])
    return node.emit_one("where", [negative, node.emit_one("add", [indices, np.asarray(extent, np.int64)]), indices])


def _neutral(dtype, reduction: str) -> np.ndarray:
    """What an unmatched update contributes to ``reduction``."""
    if reduction in ("max", "min"):
        info = np.iinfo(dtype) if element_kind(dtype) in "iu" else None
        value = (info.min if reduction == "max" else info.max) if info else (-np.inf if reduction == "max" else np.inf)
        return np.array(value, dtype)
    return np.array(1 if reduction == "mul" else 0, dtype)


def _scatter(node: NodeBuilder, data, match, updates, reduction: str):
    """data (K, ...) with each position k combined with the updates n where match[k, n, ...]."""
    dtype = node.spec(data).dtype
    selected = shape_numel(broadcast(node.spec(match).shape, (1,) + tuple(node.spec(updates).shape)))
    if selected > MATCH_LIMIT:
        node.unsupported(f"a scatter of {node.spec(updates)} into {node.spec(data)} (its one-hot match would exceed "
                         f"{MATCH_LIMIT} elements)")
    if reduction not in _REDUCTIONS:
        node.unsupported(f"reduction '{reduction}'")
    selected = node.emit_one("where", [match, node.emit_one("unsqueeze", [updates], axes=[0]), _neutral(dtype, reduction)])
    combined = node.emit_one(_REDUCTIONS[reduction], [selected], axes=[1], keepdims=0)
    hit = node.emit_one("reduce_max", [node.emit_one("cast", [match], to="i8")], axes=[1], keepdims=0)
    hit = node.emit_one("cast", [hit], to="i1")
    if reduction == "add":
        combined = node.emit_one("add", [data, combined])
    elif reduction == "mul":
        combined = node.emit_one("mul", [data, combined])
    elif reduction in ("max", "min"):
        combined = node.emit_one(reduction, [data, combined])
    return node.emit_one("where", [hit, combined, data])


def _moved(node: NodeBuilder, x, axis: int):
    """``x`` with ``axis`` first."""
    rank = node.spec(x).rank
    perm = [axis] + [a for a in range(rank) if a != axis]
    return x if axis == 0 else node.emit_one("transpose", [x], perm=perm)


def _padded_to(node: NodeBuilder, x, shape, value: float):
    """``x`` padded at the end of each axis to ``shape`` with ``value``."""
    extents = node.spec(x).shape
    if tuple(extents) == tuple(shape):
        return x
    pads = [0] * len(shape) + [s - e for s, e in zip(shape, extents)]
    return node.emit_one("pad", [x], pads=pads, constant_value=value)


@converter("ScatterElements", "Scatter")
def _scatter_elements(node: NodeBuilder):
    data, indices, updates = node.operand(0), node.operand(1), node.operand(2)
    spec, index_spec = node.spec(data), node.spec(indices)
    if index_spec.shape != node.spec(updates).shape or index_spec.rank != spec.rank or any(
            i > d for i, d in zip(index_spec.shape, spec.shape)):
        raise OnnxImportError(f"{node.info}: indices {index_spec} and updates {node.spec(updates)} must have one "
                              f"shape, within the data's {spec}")
    axis = normalize_axis(node.attr("axis", 0), spec.rank)
    extent = spec.shape[axis]
    # Indices covering only part of the other axes are padded with -1, which matches no position.
    full = list(spec.shape)
    full[axis] = index_spec.shape[axis]
    indices = _padded_to(node, _wrapped(node, indices, extent), full, -1.0)
    updates = _padded_to(node, updates, full, 0.0)
    # positions k against each index: (K, n, rest of the axes)
    positions = np.arange(extent, dtype=np.int64).reshape([extent] + [1] * spec.rank)
    match = node.emit_one("equal", [node.emit_one("unsqueeze", [_moved(node, indices, axis)], axes=[0]), positions])
    result = _scatter(node, _moved(node, data, axis), match, _moved(node, updates, axis), node.attr("reduction", "none"))
    perm = [axis] + [a for a in range(spec.rank) if a != axis]
    return [result] if axis == 0 else node.emit("transpose", [result], {"perm": list(np.argsort(perm))})


def _linear(node: NodeBuilder, indices, extents):
    """Index tuples (last axis) of a tensor of ``extents`` as linear indices, negative ones wrapped."""
    strides = np.cumprod([1] + list(extents[:0:-1]))[::-1].astype(np.int64)
    wrapped = _wrapped(node, indices, np.array(extents, np.int64))
    return node.emit_one("reduce_sum", [node.emit_one("mul", [wrapped, strides])], axes=[-1], keepdims=0)


@converter("ScatterND")
def _scatter_nd(node: NodeBuilder):
    data, indices, updates = node.operand(0), node.operand(1), node.operand(2)
    spec, index_spec = node.spec(data), node.spec(indices)
    depth = index_spec.shape[-1] if index_spec.rank else 0
    count = int(np.prod(index_spec.shape[:-1], dtype=np.int64))
    row = list(spec.shape[depth:])
    if not 1 <= depth <= spec.rank or node.spec(updates).shape != tuple(index_spec.shape[:-1]) + tuple(row):
        raise OnnxImportError(f"{node.info}: indices {index_spec} and updates {node.spec(updates)} do not address "
                              f"the data {spec}")
    positions = int(np.prod(spec.shape[:depth], dtype=np.int64))
    linear = node.emit_one("reshape", [_linear(node, indices, spec.shape[:depth])], shape=[1, count] + [1] * len(row))
    targets = np.arange(positions, dtype=np.int64).reshape([positions, 1] + [1] * len(row))
    match = node.emit_one("equal", [linear, targets])
    flat_data = node.emit_one("reshape", [data], shape=[positions] + row)
    flat_updates = node.emit_one("reshape", [updates], shape=[count] + row)
    result = _scatter(node, flat_data, match, flat_updates, node.attr("reduction", "none"))
    return node.emit("reshape", [result], {"shape": list(spec.shape)})


@converter("GatherND")
def _gather_nd(node: NodeBuilder):
    """data[batch..., index tuple] for each tuple: one gather at linear indices of the data
    flattened over its batch and indexed axes."""
    data, indices = node.operand(0), node.operand(1)
    spec, index_spec = node.spec(data), node.spec(indices)
    batch = node.attr("batch_dims", 0)
    depth = index_spec.shape[-1] if index_spec.rank else 0
    if index_spec.rank < 1 or batch + depth > spec.rank or tuple(index_spec.shape[:batch]) != tuple(spec.shape[:batch]):
        raise OnnxImportError(f"{node.info}: indices {index_spec} do not address the data {spec} "
                              f"with batch_dims {batch}")
    indexed = spec.shape[batch:batch + depth]
    linear = _linear(node, indices, indexed) if depth else np.zeros(index_spec.shape[:-1], np.int64)
    batches = int(np.prod(spec.shape[:batch], dtype=np.int64))
    if batch:  # each batch's block starts after those of the batches before it
        offsets = (np.arange(batches, dtype=np.int64) * int(np.prod(indexed, dtype=np.int64))).reshape(
            list(spec.shape[:batch]) + [1] * (index_spec.rank - 1 - batch))
        linear = node.emit_one("add", [linear, offsets])
    flat = node.emit_one("reshape", [data], shape=[batches * int(np.prod(indexed, dtype=np.int64))]
                         + list(spec.shape[batch + depth:]))
    return node.emit("gather", [flat, linear], {"axis": 0})
