"""ONNX TopK imported as k selection steps in existing ECG ops, unrolled (k is a constant).

Step i takes the largest (smallest) value m among the elements not yet taken (a select and
a ``reduce_max``), and the first untaken position holding m (``arg_max`` of a bool match):
exact for ties (the lower index first, as ONNX specifies) and for values equal to the
masking sentinel. Each step reads the axis once, so the op costs k passes over it; k above
``MAX_K`` is refused with an error naming the node.
"""

import numpy as np

from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import dtype_name, element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError

MAX_K = 128


def _sentinel(dtype, largest: bool) -> np.ndarray:
    """A value no element beats: the bottom of ``dtype`` for the largest, the top for the smallest."""
    if element_kind(dtype) == "f":
        return np.array(-np.inf if largest else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if largest else info.max, dtype)


@converter("TopK")
def _top_k(node: NodeBuilder):
    x = node.operand(0)
    spec = node.spec(x)
    if element_kind(spec.dtype) not in "fiu":
        node.unsupported(f"TopK on {dtype_name(spec.dtype)} tensors")
    axis = normalize_axis(node.attr("axis", -1), spec.rank)
    k = node.required(1, "k") if node.opset >= 10 else np.array(node.attr("k"))
    k = int(np.asarray(k).reshape(-1)[0])
    if not 0 <= k <= spec.shape[axis]:
        raise OnnxImportError(f"{node.info}: k = {k} is outside [0, {spec.shape[axis]}]")
    if k > MAX_K:
        node.unsupported(f"k = {k} (the selection is unrolled: at most {MAX_K})")
    largest = bool(node.attr("largest", 1))
    best = "reduce_max" if largest else "reduce_min"
    shape = [1] * spec.rank
    shape[axis] = spec.shape[axis]
    positions = np.arange(spec.shape[axis], dtype=np.int64).reshape(shape)
    sentinel = _sentinel(spec.dtype, largest)
    taken = np.zeros(shape, np.bool_)
    values, indices = [], []
    for _ in range(k):
        candidates = node.emit_one("where", [taken, sentinel, x])
        value = node.emit_one(best, [candidates], axes=[axis], keepdims=1)
        holds = node.emit_one("and", [node.emit_one("equal", [x, value]), node.emit_one("not", [taken])])
        index = node.emit_one("arg_max", [node.emit_one("cast", [holds], to="i8")], axis=axis, keepdims=1)
        taken = node.emit_one("or", [taken, node.emit_one("equal", [positions, index])])
        values.append(value)
        indices.append(index)
    if not values:
        empty = list(spec.shape)
        empty[axis] = 0
        return [np.zeros(empty, spec.dtype), np.zeros(empty, np.int64)]
    joined = []
    for parts in (values, indices):
        result = parts[0]
        for part in parts[1:]:
            result = node.emit_one("concat", [result, part], axis=axis)
        joined.append(result)
    return joined
