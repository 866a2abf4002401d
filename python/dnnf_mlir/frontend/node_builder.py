"""The view of one ONNX node that converters work with (``NodeBuilder``).

It sits below both the importer, which walks the graph and builds one per node, and
the converters, which the importer dispatches to and which build ECG ops through it.
"""

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import ecg
from ..ecg import OPS, TensorSpec
from .onnx_types import OnnxImportError

# Results of all-constant nodes up to this many elements are folded at import;
# larger ones (weight math) stay in the graph for the constant-folding pass.
FOLD_LIMIT = 1 << 16


@dataclass
class NodeInfo:
    """What an error message needs to point at a node."""

    name: str
    op_type: str
    domain: str
    opset: int

    def __str__(self):
        return f"node '{self.name}' ({self.domain or 'ai.onnx'}::{self.op_type}, opset {self.opset})"


@dataclass
class UnsupportedOutput:
    """An output a converter does not produce; an error only if something uses it."""

    message: str


def _attr_value(attribute: onnx.AttributeProto):
    value = helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value


class NodeBuilder:
    """The view of one ONNX node that converters work with.

    ``importer`` holds the graph's values by ONNX name (``values``: arrays known at
    compile time, ``ir.Value``s and ``UnsupportedOutput``s) and turns an array into
    an ``ecg.constant`` (``constant(array)``).
    """

    def __init__(self, importer, node: onnx.NodeProto, info: NodeInfo):
        self.importer = importer
        self.node = node
        self.info = info
        self.opset = info.opset
        self.attributes = {a.name: _attr_value(a) for a in node.attribute}

    def has_input(self, index: int) -> bool:
        return index < len(self.node.input) and self.node.input[index] != ""

    def operand(self, index: int):
        """Input ``index``: a numpy array when known at compile time, else an ir.Value."""
        name = self.node.input[index]
        if name not in self.importer.values:
            raise OnnxImportError(f"{self.info}: input '{name}' is not defined before the node")
        value = self.importer.values[name]
        if isinstance(value, UnsupportedOutput):
            raise OnnxImportError(value.message)
        return value

    def operands(self) -> list:
        return [self.operand(i) for i in range(len(self.node.input)) if self.has_input(i)]

    def known(self, index: int, what: str) -> np.ndarray | None:
        """Input ``index`` as a compile-time array (None when absent); an error when dynamic."""
        if not self.has_input(index):
            return None
        value = self.operand(index)
        if not isinstance(value, np.ndarray):
            raise OnnxImportError(f"{self.info}: input {index} ({what}) must be a compile-time constant")
        return value

    def required(self, index: int, what: str) -> np.ndarray:
        """``known``, for an input the op cannot do without: an error when absent."""
        value = self.known(index, what)
        if value is None:
            raise OnnxImportError(f"{self.info}: input {index} ({what}) is missing")
        return value

    def attr(self, name: str, default=None):
        return self.attributes.get(name, default)

    def spec(self, value) -> TensorSpec:
        return TensorSpec.of(value) if isinstance(value, np.ndarray) else ecg.from_mlir(value.type)

    def emit(self, mnemonic: str, operands: list, attrs: dict | None = None) -> list:
        """Build an ECG op, or fold it when every operand is known and the result is small."""
        cls = OPS[mnemonic]
        specs = [self.spec(v) for v in operands]
        cls.check_arity(len(operands))
        attrs = cls.complete_attrs(specs, cls.checked_attrs(attrs or {}))
        results = cls.infer(specs, attrs)
        if all(isinstance(v, np.ndarray) for v in operands) and all(r.numel <= FOLD_LIMIT for r in results):
            folded = cls.reference(operands, attrs, results)
            return [np.asarray(value, dtype=r.dtype).reshape(r.shape) for value, r in zip(folded, results)]
        values = [self.importer.constant(v) if isinstance(v, np.ndarray) else v for v in operands]
        op = cls.build(values, attrs, results)
        op.check()  # what the verifier would say later, now with the node's name (e.g. constant indices out of range)
        return list(op.results)

    def emit_one(self, mnemonic: str, operands: list, **attrs):
        """``emit`` for an op of one result: that result (what decomposing converters chain)."""
        (result,) = self.emit(mnemonic, operands, attrs)
        return result

    def unsupported(self, what: str):
        raise OnnxImportError(f"{self.info}: {what} is not supported")
