"""QDQ convolutions imported as the QLinearConv onnxruntime runs them.

A QDQ model (onnxruntime's quantization tool's default format) writes a quantized
convolution as f32 ops between (de)quantizations:
QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w), DequantizeLinear(b))).
Imported as written, the weights' DequantizeLinear folds into f32 filters and the
convolution runs in f32, rounding differently from onnxruntime, whose QDQ transformer
(ORT_ENABLE_EXTENDED and above) runs such a group as one QLinearConv: integer
products, the int32 bias added to them, one rounding at the end. ``qdq_convolutions``
rewrites each group into that QLinearConv node before import, so the importer builds
its integer form (``quantization_converters``), which ``dnnf-int8-matmuls`` computes
on VNNI, with onnxruntime's results bit for bit.

A group qualifies as onnxruntime's Conv selector has it: x and y of one 8-bit type,
the weights an 8-bit initializer, the bias (if any) an int32 initializer; every
scale and zero point an initializer, per tensor except the weights' (axis 0). The
bias's scale must be x's times w's (what the bias means in QLinearConv; onnxruntime
does not check it), its zero point zero. A Relu between the Conv and the
QuantizeLinear goes only where onnxruntime's ReluQuantFusion drops it: y's zero
point is its type's minimum, so the quantization clamps as the Relu would.
Graphs with subgraphs are left as written (their consumers are not all visible here).
"""

import numpy as np
import onnx
from onnx import helper, numpy_helper

EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))
# The bias's scale against x's scale times w's, as the quantization tool rounds it.
BIAS_SCALE_RTOL = 1e-6


class _Graph:
    """The initializers, producers and consumers of a graph's values."""

    def __init__(self, graph: onnx.GraphProto):
        self.graph = graph
        self.initializers = {i.name: i for i in graph.initializer}
        self.arrays = {}
        self.producers = {o: node for node in graph.node for o in node.output if o}
        self.consumers = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.outputs = {o.name for o in graph.output}

    def only_consumer(self, name: str):
        """The one node that reads ``name``, None when another (or a graph output) does too."""
        readers = self.consumers.get(name, [])
        return readers[0] if len(readers) == 1 and name not in self.outputs else None

    def array(self, name: str):
        """Initializer ``name`` as an array, read when first asked for; None when there is
        none or it cannot be read (a malformed tensor: the importer reports it)."""
        if name not in self.arrays:
            tensor = self.initializers.get(name)
            try:
                self.arrays[name] = None if tensor is None else numpy_helper.to_array(tensor)
            except (ValueError, TypeError):
                self.arrays[name] = None
        return self.arrays[name]

    def constant(self, node, index: int):
        """Input ``index`` of ``node`` as an array when it is an initializer, else None."""
        return self.array(node.input[index]) if len(node.input) > index and node.input[index] else None

    def quantization(self, node, op_type: str):
        """(data, scale, zero point) of a ``op_type`` node without block_size,
        output_dtype or saturate, the scale f32 and a zero point given, else None."""
        if node is None or node.op_type != op_type or node.domain not in ("", "ai.onnx"):
            return None
        if any(a.name in ("block_size", "output_dtype", "saturate") for a in node.attribute):
            return None
        scale, zero_point = self.constant(node, 1), self.constant(node, 2)
        if scale is None or zero_point is None or scale.dtype != np.float32 or scale.shape != zero_point.shape:
            return None
        return node.input[0], scale, zero_point


def _axis(node) -> int:
    return next((a.i for a in node.attribute if a.name == "axis"), 1)


def _per_tensor(scale: np.ndarray) -> bool:
    return scale.size == 1 and scale.ndim <= 1


def _weights_fit(found, dequantize) -> bool:
    """Whether (weights, scale, zero point) are 8-bit, per tensor or per output channel."""
    weights, scale, zero_point = found
    if weights.dtype not in EIGHT_BIT or weights.ndim < 3:
        return False
    return _per_tensor(scale) or (scale.shape == weights.shape[:1] and _axis(dequantize) == 0)


def _bias_fits(found, x_scale: np.ndarray, w_scale: np.ndarray, dequantize) -> bool:
    bias, scale, zero_point = found
    if bias is None or bias.dtype != np.int32 or bias.ndim != 1 or np.any(zero_point != 0):
        return False
    if not (_per_tensor(scale) or _axis(dequantize) == 0):
        return False
    expected = (x_scale.reshape(()) * w_scale).astype(np.float32)
    return np.allclose(np.broadcast_to(scale, bias.shape), np.broadcast_to(expected, bias.shape),
                       rtol=BIAS_SCALE_RTOL, atol=0)


def _quantize_after(graph: _Graph, conv):
    """(the QuantizeLinear that alone reads ``conv``'s result, through a Relu that
    onnxruntime drops (y's zero point its type's minimum), its y's zero point, the nodes
    it replaces), or None."""
    reader = graph.only_consumer(conv.output[0])
    replaced = [conv]
    if reader is not None and reader.op_type == "Relu":
        replaced.append(reader)
        reader = graph.only_consumer(reader.output[0])
    found = graph.quantization(reader, "QuantizeLinear")
    if found is None or not _per_tensor(found[1]) or found[2].dtype not in EIGHT_BIT:
        return None
    if len(replaced) == 2 and found[2].reshape(()) != np.iinfo(found[2].dtype).min:
        return None
    return reader, found[2], replaced + [reader]


def _qlinear_conv(graph: _Graph, conv):
    """(the QLinearConv node that computes ``conv``'s QDQ group, the nodes it replaces), or None."""
    if conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx") or len(conv.input) < 2:
        return None
    dequantized = [graph.producers.get(name) for name in conv.input]
    x = graph.quantization(dequantized[0], "DequantizeLinear")
    w = graph.quantization(dequantized[1], "DequantizeLinear")
    quantize = _quantize_after(graph, conv)
    if x is None or w is None or quantize is None or x[2].dtype not in EIGHT_BIT or not _per_tensor(x[1]):
        return None
    quantize, y_zero_point, replaced = quantize
    weights = graph.array(w[0])
    if y_zero_point.dtype != x[2].dtype or weights is None or not _weights_fit((weights,) + w[1:], dequantized[1]):
        return None
    inputs = [x[0], *dequantized[0].input[1:3], w[0], *dequantized[1].input[1:3], *quantize.input[1:3]]
    if len(conv.input) > 2 and conv.input[2]:
        b = graph.quantization(dequantized[2], "DequantizeLinear")
        if b is None or not _bias_fits((graph.array(b[0]),) + b[1:], x[1], w[1], dequantized[2]):
            return None
        inputs.append(b[0])
    node = helper.make_node("QLinearConv", inputs, [quantize.output[0]], name=conv.name)
    node.attribute.extend(conv.attribute)
    return node, replaced


def _has_subgraphs(graph: onnx.GraphProto) -> bool:
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in graph.node for a in n.attribute)


def qdq_convolutions(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model``, or a copy with each QDQ convolution group one QLinearConv (see the module
    docstring) and the DequantizeLinear nodes no longer read removed; the argument is never changed."""
    if _has_subgraphs(model.graph):
        return model
    graph = _Graph(model.graph)
    rewritten, removed = {}, set()
    for node in model.graph.node:
        found = _qlinear_conv(graph, node)
        if found is not None:
            rewritten[id(node)] = found[0]
            removed.update(id(n) for n in found[1][1:])
    if not rewritten:
        return model
    nodes = [rewritten.get(id(n), n) for n in model.graph.node if id(n) not in removed]
    read = {name for n in nodes for name in n.input} | graph.outputs
    nodes = [n for n in nodes if n.op_type != "DequantizeLinear" or any(o in read for o in n.output)]
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.node[:]
    copy.graph.node.extend(nodes)
    return copy


__all__ = ["qdq_convolutions"]
