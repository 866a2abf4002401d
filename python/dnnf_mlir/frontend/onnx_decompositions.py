"""ONNX ops imported as compositions of existing ECG ops, registered in ``CONVERTERS``.

An op here has no ECG op of its own: it is what its ONNX function body says, built
from ECG ops that already carry mapping types, algebraic properties, reference
semantics and linalg lowerings, so it joins rewriting, fusion and both code
generators without code of its own there.
"""

from ..ecg.tensor_spec import dtype_name
from .node_builder import NodeBuilder
from .onnx_converters import converter


@converter("CastLike")
def _cast_like(node: NodeBuilder):
    """Cast input 0 to the element type of input 1 (whose values are not read)."""
    to = node.spec(node.operand(1)).dtype
    return node.emit("cast", [node.operand(0)], {"to": dtype_name(to)})
