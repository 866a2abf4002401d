"""ONNX TopK imported as the ECG op ``top_k`` (one pass per row, ``conversion/ecg_to_linalg/top_k.py``).

k is an input from opset 10 on and must be a constant; k = 0 gives empty results.
"""

import numpy as np

from ..ecg.ops.top_k import TopKOp
from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import dtype_name
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError


@converter("TopK")
def _top_k(node: NodeBuilder):
    x = node.operand(0)
    spec = node.spec(x)
    if spec.dtype not in TopKOp.TYPES:
        node.unsupported(f"TopK on {dtype_name(spec.dtype)} tensors")
    axis = normalize_axis(node.attr("axis", -1), spec.rank)
    k = node.required(1, "k") if node.opset >= 10 else np.array(node.attr("k"))
    k = int(np.asarray(k).reshape(-1)[0])
    if not 0 <= k <= spec.shape[axis]:
        raise OnnxImportError(f"{node.info}: k = {k} is outside [0, {spec.shape[axis]}]")
    if k == 0:
        empty = list(spec.shape)
        empty[axis] = 0
        return [np.zeros(empty, spec.dtype), np.zeros(empty, np.int64)]
    return node.emit("top_k", [x], {"axis": axis, "k": k, "largest": int(node.attr("largest", 1))})
