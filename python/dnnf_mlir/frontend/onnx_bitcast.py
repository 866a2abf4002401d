"""ONNX BitCast (opset 26) as the ECG ``bitcast`` op; a target of another width, or bool, is refused."""

import numpy as np

from ..ecg.tensor_spec import dtype_name
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import onnx_dtype


@converter("BitCast")
def _bitcast(node: NodeBuilder):
    x = node.operand(0)
    source, to = node.spec(x).dtype, onnx_dtype(node.attr("to"))
    if to == np.bool_:
        node.unsupported("BitCast to bool (a byte that is neither 0 nor 1 is no bool)")
    if source.itemsize != to.itemsize:
        node.unsupported(f"BitCast from {dtype_name(source)} to {dtype_name(to)} (the widths differ)")
    return node.emit("bitcast", [x], {"to": dtype_name(to)})
