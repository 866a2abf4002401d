"""ONNX ScatterElements (and Scatter-9/10), ScatterND and GatherND.

The scatters are the ECG ops ``scatter_elements`` and ``scatter_nd``, lowered to one loop
over the updates. GatherND is one ``gather`` from the data flattened over its indexed
axes, at the linear index of each index tuple.
"""

import numpy as np

from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError


def _scattered(node: NodeBuilder, mnemonic: str, attrs: dict) -> list:
    """The scatter ``mnemonic`` of the node's three inputs; constant indices out of range
    (found when the scatter is folded) are the node's error."""
    try:
        return node.emit(mnemonic, [node.operand(0), node.operand(1), node.operand(2)], attrs)
    except IndexError as error:
        raise OnnxImportError(f"{node.info}: {error}") from None


@converter("ScatterElements", "Scatter")
def _scatter_elements(node: NodeBuilder):
    attrs = {"axis": node.attr("axis", 0), "reduction": node.attr("reduction", "none")}
    return _scattered(node, "scatter_elements", attrs)


@converter("ScatterND")
def _scatter_nd(node: NodeBuilder):
    return _scattered(node, "scatter_nd", {"reduction": node.attr("reduction", "none")})


def _wrapped(node: NodeBuilder, indices, extent):
    """Indices as int64, negative ones counted from ``extent`` (a number or an int64 array)."""
    if node.spec(indices).dtype != np.int64:
        indices = node.emit_one("cast", [indices], to="i64")
    negative = node.emit_one("less", [indices, np.array(0, np.int64)])
    return node.emit_one("where", [negative, node.emit_one("add", [indices, np.asarray(extent, np.int64)]), indices])


def _linear(node: NodeBuilder, indices, extents):
    """Index tuples (last axis) of a tensor of ``extents`` as linear indices, negative ones wrapped."""
    strides = np.cumprod([1] + list(extents[:0:-1]))[::-1].astype(np.int64)
    wrapped = _wrapped(node, indices, np.array(extents, np.int64))
    return node.emit_one("reduce_sum", [node.emit_one("mul", [wrapped, strides])], axes=[-1], keepdims=0)


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
