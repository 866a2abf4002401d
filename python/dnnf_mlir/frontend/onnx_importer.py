"""ONNX ModelProto -> ECG dialect, with static shapes and folded shape arithmetic.

Every ONNX value is either known at compile time (a numpy array: initializers,
Constant nodes, and whatever is computed from them alone) or an SSA value. A node
whose inputs are all known and whose result is small is folded with the ECG op's
reference semantics, which is how Shape/Gather/Concat/Unsqueeze chains collapse
into static attributes. Every op carries its ONNX node's name as its location.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
from onnx import helper, numpy_helper

from .._mlir import func, ir
from .. import ecg
from ..ecg import OPS, TensorSpec, VerificationError
from ..ecg.tensor_spec import UnsupportedTypeError, to_mlir
from .onnx_converters import CONVERTERS
from .onnx_types import OnnxImportError, onnx_dtype

# Results of all-constant nodes up to this many elements are folded at import;
# larger ones (weight math) stay in the graph for the constant-folding pass.
FOLD_LIMIT = 1 << 16
# Up to 28: the converted ops' versions after opset 21 add element types the importer
# rejects (bfloat16, float8, int4, ...), attributes for those types only (Cast's
# round_mode), or attributes their converters handle (SpaceToDepth's mode, Range's
# stash_type); Mod-28 defines fmod=0 for floats, which ecg.mod implements, and
# BitShift-28 signed integers, which ecg.bit_shift implements.
MIN_OPSET, MAX_OPSET = 7, 28
ONNX_DOMAINS = ("", "ai.onnx")


@dataclass
class NodeInfo:
    """What an error message needs to point at a node."""

    name: str
    op_type: str
    domain: str
    opset: int

    def __str__(self):
        return f"node '{self.name}' ({self.domain or 'ai.onnx'}::{self.op_type}, opset {self.opset})"


def load_model(path) -> onnx.ModelProto:
    """Read a binary .onnx file, or ONNX's textual syntax from a .onnxtxt file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise OnnxImportError(f"cannot read '{path}': {error.strerror}") from None
    if path.suffix == ".onnxtxt":
        try:
            return onnx.parser.parse_model(data.decode())
        except Exception as error:  # the parser raises a bare ParseError
            raise OnnxImportError(f"'{path}': {str(error).strip().splitlines()[0]}") from None
    try:
        model = onnx.load_from_string(data)
    except Exception as error:  # protobuf raises its own DecodeError types
        raise OnnxImportError(f"'{path}' is not a valid ONNX model (truncated or corrupt: {error})") from None
    if not model.graph.node and not model.graph.output:
        raise OnnxImportError(f"'{path}' is not a valid ONNX model (it has no graph)")
    return model


def import_onnx(model, *, shapes: dict | None = None, context: ir.Context | None = None) -> ir.Module:
    """Import an ONNX model (path or ModelProto) into a new module with ``@main``.

    ``shapes`` maps input names to static shapes, overriding or completing the
    model's declared ones.
    """
    if not isinstance(model, onnx.ModelProto):
        model = load_model(model)
    context = context or _default_context()
    with context:
        return _Importer(model, shapes or {}).run()


def _default_context():
    from .. import make_context

    return make_context()


def _attr_value(attribute: onnx.AttributeProto):
    value = helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value


@dataclass
class UnsupportedOutput:
    """An output a converter does not produce; an error only if something uses it."""

    message: str


class _Importer:
    def __init__(self, model: onnx.ModelProto, shapes: dict):
        self.model = model
        self.graph = model.graph
        self.shapes = {name: tuple(shape) for name, shape in shapes.items()}
        self.opset = {o.domain: o.version for o in model.opset_import}
        self.values = {}  # ONNX name -> np.ndarray (known) or ir.Value
        self.materialized = {}  # id(array) -> (ir.Value of its ecg.constant, array)
        self.initializer_names = {}  # id(array) -> initializer name, the constant's location

    # ----- entry -----

    def run(self) -> ir.Module:
        initializers = {init.name: numpy_helper.to_array(init) for init in self.graph.initializer}
        for init in self.graph.initializer:
            try:
                onnx_dtype(init.data_type)
            except OnnxImportError as error:
                raise OnnxImportError(f"initializer '{init.name}': {error}") from None
        for init in self.graph.sparse_initializer:
            raise OnnxImportError(f"sparse initializer '{init.values.name}' is not supported")
        inputs = [i for i in self.graph.input if i.name not in initializers]
        unknown = set(self.shapes) - {i.name for i in inputs}
        if unknown:
            raise OnnxImportError(f"--shape names no graph input: {', '.join(sorted(unknown))}")
        input_specs = [self._input_spec(i) for i in inputs]
        self.values.update(initializers)
        self.initializer_names = {id(array): name for name, array in initializers.items()}

        module = ir.Module.create(loc=ir.Location.unknown())
        with ir.InsertionPoint(module.body), ir.Location.unknown():
            function = func.FuncOp("main", ([to_mlir(s) for s in input_specs], []))
            function.attributes["arg_attrs"] = ir.ArrayAttr.get(
                [ir.DictAttr.get({"onnx.name": ir.StringAttr.get(i.name)}) for i in inputs]
            )
            block = function.add_entry_block([ir.Location.name(i.name) for i in inputs])
        for value_info, argument in zip(inputs, block.arguments):
            self.values[value_info.name] = argument
        with ir.InsertionPoint(block):
            for index, node in enumerate(self.graph.node):
                self._import_node(node, index)
            with ir.Location.unknown():
                results = [self._value(o.name, what=f"graph output '{o.name}'") for o in self.graph.output]
                func.ReturnOp(results)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], [r.type for r in results])
        )
        function.attributes["res_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get({"onnx.name": ir.StringAttr.get(o.name)}) for o in self.graph.output]
        )
        return module

    def _input_spec(self, value_info: onnx.ValueInfoProto) -> TensorSpec:
        tensor = value_info.type.tensor_type
        if not value_info.type.HasField("tensor_type"):
            raise OnnxImportError(f"graph input '{value_info.name}' is not a tensor")
        try:
            dtype = onnx_dtype(tensor.elem_type)
        except OnnxImportError as error:
            raise OnnxImportError(f"graph input '{value_info.name}': {error}") from None
        if value_info.name in self.shapes:
            return TensorSpec(self.shapes[value_info.name], dtype)
        if not tensor.HasField("shape"):
            raise OnnxImportError(f"graph input '{value_info.name}' has no shape; give it with --shape {value_info.name}=DIMS")
        dims = []
        for axis, dim in enumerate(tensor.shape.dim):
            if not dim.HasField("dim_value"):
                label = f"'{dim.dim_param}'" if dim.dim_param else "?"
                raise OnnxImportError(
                    f"graph input '{value_info.name}' has dynamic dimension {label} at axis {axis}; "
                    f"give a static shape with --shape {value_info.name}=" + "x".join(["N"] * len(tensor.shape.dim))
                )
            dims.append(dim.dim_value)
        return TensorSpec(dims, dtype)

    # ----- nodes -----

    def _import_node(self, node: onnx.NodeProto, index: int):
        domain = node.domain
        opset = self.opset.get(domain if domain != "ai.onnx" else "", 0)
        info = NodeInfo(node.name or f"{node.op_type}_{index}", node.op_type, domain, opset)
        if domain not in ONNX_DOMAINS:
            raise OnnxImportError(f"{info}: unknown operator domain '{domain}'")
        if not MIN_OPSET <= opset <= MAX_OPSET:
            raise OnnxImportError(f"{info}: opset {opset} is outside the supported range {MIN_OPSET}-{MAX_OPSET}")
        converter = CONVERTERS.get(node.op_type)
        if converter is None:
            raise OnnxImportError(f"{info}: unsupported ONNX operator '{node.op_type}'")
        with ir.Location.name(info.name):
            builder = NodeBuilder(self, node, info)
            try:
                outputs = converter(builder)
            except (VerificationError, UnsupportedTypeError) as error:
                raise OnnxImportError(f"{info}: {error}") from None
        for index, name in enumerate(node.output):
            if index < len(outputs):
                self.values[name] = outputs[index]
            elif name:
                self.values[name] = UnsupportedOutput(f"{info}: output {index} ('{name}') is not supported")

    def _value(self, name: str, what: str) -> ir.Value:
        if name not in self.values:
            raise OnnxImportError(f"{what} uses undefined value '{name}'")
        value = self.values[name]
        if isinstance(value, UnsupportedOutput):
            raise OnnxImportError(value.message)
        if isinstance(value, np.ndarray):
            return self.constant(value)
        return value

    def constant(self, array: np.ndarray) -> ir.Value:
        key = id(array)
        if key not in self.materialized:
            name = self.initializer_names.get(key)
            loc = ir.Location.name(name) if name else None
            self.materialized[key] = (OPS["constant"].build([], {"value": array}, loc=loc).output, array)
        return self.materialized[key][0]


class NodeBuilder:
    """The view of one ONNX node that converters work with."""

    def __init__(self, importer: _Importer, node: onnx.NodeProto, info: NodeInfo):
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

    def attr(self, name: str, default=None):
        return self.attributes.get(name, default)

    def spec(self, value) -> TensorSpec:
        return TensorSpec.of(value) if isinstance(value, np.ndarray) else ecg.from_mlir(value.type)

    def emit(self, mnemonic: str, operands: list, attrs: dict | None = None) -> list:
        """Build an ECG op, or fold it when every operand is known and the result is small."""
        cls = OPS[mnemonic]
        specs = [self.spec(v) for v in operands]
        attrs = cls.complete_attrs(specs, attrs or {})
        results = cls.infer(specs, attrs)
        if all(isinstance(v, np.ndarray) for v in operands) and all(r.numel <= FOLD_LIMIT for r in results):
            folded = cls.reference(operands, attrs, results)
            return [np.asarray(value, dtype=r.dtype).reshape(r.shape) for value, r in zip(folded, results)]
        values = [self.importer.constant(v) if isinstance(v, np.ndarray) else v for v in operands]
        return list(cls.build(values, attrs, results).results)

    def unsupported(self, what: str):
        raise OnnxImportError(f"{self.info}: {what} is not supported")
