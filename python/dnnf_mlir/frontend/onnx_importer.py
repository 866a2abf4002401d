"""ONNX ModelProto -> ECG dialect, with static shapes and folded shape arithmetic.

Every ONNX value is either known at compile time (a numpy array: initializers,
Constant nodes, and whatever is computed from them alone) or an SSA value. A node
whose inputs are all known and whose result is small is folded with the ECG op's
reference semantics, which is how Shape/Gather/Concat/Unsqueeze chains collapse
into static attributes. Every op carries its ONNX node's name as its location.
"""

from pathlib import Path

import numpy as np
import onnx
import onnx.parser
from onnx import numpy_helper
from onnx.external_data_helper import load_external_data_for_model

from ..context import make_context
from .._mlir import func, ir
from ..ecg import OPS, TensorSpec, VerificationError
from ..ecg.tensor_spec import UnsupportedTypeError, check_shape, to_mlir
from .node_builder import NodeBuilder, NodeInfo, UnsupportedOutput
from . import (  # noqa: F401 (they register their converters)
    onnx_attention, onnx_bitcast, onnx_decompositions, onnx_dft, onnx_einsum, onnx_exclusions, onnx_grid_sample,
    onnx_normalizations, onnx_positional, onnx_rotary, onnx_scatter, onnx_topk,
)
from .onnx_converters import CONVERTERS
from . import quantization_converters  # noqa: F401  (registers its converters in CONVERTERS)
from .onnx_qdq import qdq_convolutions
from .onnx_types import OnnxImportError, onnx_dtype
from .onnx_upgrade import upgrade

# Up to 28: the converted ops' versions after opset 21 add element types the importer
# rejects (bfloat16, float8, int4, ...), attributes for those types only (Cast's
# round_mode), or attributes their converters handle (SpaceToDepth's mode, Range's
# stash_type); Mod-28 defines fmod=0 for floats, which ecg.mod implements, and
# BitShift-28 signed integers, which ecg.bit_shift implements.
MIN_OPSET, MAX_OPSET = 7, 28
ONNX_DOMAINS = ("", "ai.onnx")


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
        except Exception as error:  # the parser raises a bare ParseError, whose argument may be bytes
            message = error.args[0].decode(errors="replace") if error.args and isinstance(error.args[0], bytes) else str(error)
            raise OnnxImportError(f"'{path}': {' '.join(message.split())}") from None
    try:
        model = onnx.load_from_string(data)
    except Exception as error:  # protobuf raises its own DecodeError types
        raise OnnxImportError(f"'{path}' is not a valid ONNX model (truncated or corrupt: {error})") from None
    if not model.graph.node and not model.graph.output:
        raise OnnxImportError(f"'{path}' is not a valid ONNX model (it has no graph)")
    _check_names(model.graph, path)
    try:  # weights stored next to the model, which onnx keeps inside its directory
        load_external_data_for_model(model, str(path.parent))
    except Exception as error:  # onnx raises ValidationError, OSError, ValueError here
        raise OnnxImportError(f"'{path}': cannot load its external data: {str(error).splitlines()[0]}") from None
    return model


def _check_names(graph: onnx.GraphProto, path: Path):
    """Protobuf hands string fields that are not UTF-8 (a corrupt file) over as bytes."""
    names = [v.name for v in (*graph.input, *graph.output, *graph.initializer)]
    for node in graph.node:
        names += [node.name, node.op_type, node.domain, *node.input, *node.output]
    for text in names:
        if isinstance(text, bytes):
            raise OnnxImportError(f"'{path}' is not a valid ONNX model (a name is not UTF-8: {text!r})")


def import_onnx(model, *, shapes: dict | None = None, context: ir.Context | None = None) -> ir.Module:
    """Import an ONNX model (path or ModelProto) into a new module with ``@main``.

    ``shapes`` maps input names to static shapes, overriding or completing the
    model's declared ones. Models below ``MIN_OPSET`` are upgraded first (``onnx_upgrade``),
    and QDQ convolutions become the QLinearConv onnxruntime runs (``onnx_qdq``).
    """
    if not isinstance(model, onnx.ModelProto):
        model = load_model(model)
    model = qdq_convolutions(upgrade(model, MIN_OPSET))
    context = context or make_context()
    with context:
        return _Importer(model, shapes or {}).run()


def _initializer_array(init: onnx.TensorProto) -> np.ndarray:
    """The value of an initializer whose element type ECG supports and whose data fits its dims."""
    try:
        onnx_dtype(init.data_type)
        check_shape(tuple(init.dims))  # before numpy allocates it
        return numpy_helper.to_array(init)
    except (OnnxImportError, UnsupportedTypeError, ValueError) as error:
        raise OnnxImportError(f"initializer '{init.name}': {error}") from None
    except Exception as error:  # onnx's own errors, e.g. external data outside the model's directory
        raise OnnxImportError(f"initializer '{init.name}': {str(error).splitlines()[0]}") from None


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
        initializers = {init.name: _initializer_array(init) for init in self.graph.initializer}
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
