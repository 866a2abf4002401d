"""ONNX RotaryEmbedding (opset 23) imported as element-wise ECG ops on slices: the
rotated part of each head is split in halves (or even/odd elements when interleaved),
rotated by the cos/sin caches (gathered at the position ids) and joined again, so the
whole op fuses into one element-wise kernel with its neighbours.
"""

from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError


def _slice(node: NodeBuilder, x, start: int, end: int, step: int = 1):
    """Elements start:end:step of the last axis."""
    rank = node.spec(x).rank
    return node.emit_one("slice", [x], starts=[start], ends=[end], axes=[rank - 1], steps=[step])


def _cache(node: NodeBuilder, index: int, positions, shape: tuple):
    """Cache ``index`` at the positions, as (batch, sequence, 1, rotary/2)."""
    cache = node.operand(index)
    if positions is not None:
        cache = node.emit_one("gather", [cache, positions], axis=0)
    if tuple(node.spec(cache).shape) != shape:
        raise OnnxImportError(f"{node.info}: the cos/sin caches give {node.spec(cache)}, not {list(shape)}")
    return node.emit_one("unsqueeze", [cache], axes=[2])


@converter("RotaryEmbedding")
def _rotary_embedding(node: NodeBuilder):
    x = node.operand(0)
    spec = node.spec(x)
    if spec.rank == 4:  # (batch, heads, sequence, head size)
        x = node.emit_one("transpose", [x], perm=[0, 2, 1, 3])
    elif spec.rank == 3:  # (batch, sequence, heads * head size)
        heads = node.attr("num_heads", 0)
        if heads <= 0 or spec.shape[2] % heads:
            raise OnnxImportError(f"{node.info}: a 3-D input needs num_heads dividing {spec.shape[2]}, got {heads}")
        x = node.emit_one("reshape", [x], shape=[spec.shape[0], spec.shape[1], heads, spec.shape[2] // heads])
    else:
        raise OnnxImportError(f"{node.info}: the input must have rank 3 or 4, got {spec}")
    batch, length, heads, head_size = node.spec(x).shape
    rotated = node.attr("rotary_embedding_dim", 0) or head_size
    if rotated % 2 or rotated > head_size:
        raise OnnxImportError(f"{node.info}: rotary_embedding_dim {rotated} must be even and at most {head_size}")
    half = rotated // 2
    positions = node.operand(3) if node.has_input(3) else None
    cos, sin = (_cache(node, index, positions, (batch, length, half)) for index in (1, 2))

    interleaved = node.attr("interleaved", 0)
    first = _slice(node, x, 0, rotated, 2) if interleaved else _slice(node, x, 0, half)
    second = _slice(node, x, 1, rotated, 2) if interleaved else _slice(node, x, half, rotated)
    real = node.emit_one("sub", [node.emit_one("mul", [cos, first]), node.emit_one("mul", [sin, second])])
    imaginary = node.emit_one("add", [node.emit_one("mul", [sin, first]), node.emit_one("mul", [cos, second])])
    if interleaved:  # back to even/odd elements: (..., half, 2) flattened
        pairs = [node.emit_one("unsqueeze", [v], axes=[4]) for v in (real, imaginary)]
        y = node.emit_one("reshape", [node.emit_one("concat", pairs, axis=4)], shape=[batch, length, heads, rotated])
    else:
        y = node.emit_one("concat", [real, imaginary], axis=3)
    if rotated < head_size:
        y = node.emit_one("concat", [y, _slice(node, x, rotated, head_size)], axis=3)
    if spec.rank == 4:
        return node.emit("transpose", [y], {"perm": [0, 2, 1, 3]})
    return node.emit("reshape", [y], {"shape": list(spec.shape)})
