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
from ..ecg.ops import data_movement
from ..ecg.shapes import broadcast, normalize_axis
from ..ecg.tensor_spec import UnsupportedTypeError, dtype_name, to_mlir

# Results of all-constant nodes up to this many elements are folded at import;
# larger ones (weight math) stay in the graph for the constant-folding pass.
FOLD_LIMIT = 1 << 16
# Up to 28: the converted ops' versions after opset 21 add element types the importer
# rejects (bfloat16, float8, int4, ...), attributes for those types only (Cast's
# round_mode), or attributes their converters handle (SpaceToDepth's mode, Range's
# stash_type); Mod-28 defines fmod=0 for floats, which ecg.mod implements.
MIN_OPSET, MAX_OPSET = 7, 28
ONNX_DOMAINS = ("", "ai.onnx")


class OnnxImportError(Exception):
    """A model the importer cannot translate; the message is one line for the user."""


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


def _onnx_dtype(elem_type: int) -> np.dtype:
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
        dtype_name(dtype)  # raises for types numpy has but ECG does not model (bfloat16, float8, strings)
        return dtype
    except (KeyError, UnsupportedTypeError):
        raise OnnxImportError(f"ONNX element type {onnx.TensorProto.DataType.Name(elem_type)} is not supported") from None


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
                _onnx_dtype(init.data_type)
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
            dtype = _onnx_dtype(tensor.elem_type)
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


# ----- converters: ONNX node -> list of output values -----

CONVERTERS = {}


def converter(*op_types):
    def register(function):
        for op_type in op_types:
            CONVERTERS[op_type] = function
        return function

    return register


def _generic(mnemonic: str, ignored=()):
    """Convert by copying ONNX attributes onto the ECG op of the same attribute names."""
    cls = OPS[mnemonic]

    def convert(node: NodeBuilder):
        attrs = {}
        for name, value in node.attributes.items():
            if name in cls.ATTRIBUTES:
                attrs[name] = value
            elif name not in ignored:
                node.unsupported(f"attribute '{name}'")
        return node.emit(mnemonic, node.operands(), attrs)

    return convert


# Attributes that do not change inference results.
_IGNORED = {
    "BatchNormalization": ("momentum", "spatial", "training_mode", "is_test", "consumed_inputs"),
    "Dropout": ("ratio", "seed", "is_test"),
    "MaxPool": ("storage_order",),
    "LayerNormalization": ("stash_type",),
}

for _cls in OPS.values():
    for _op_type in _cls.ONNX:
        CONVERTERS.setdefault(_op_type, _generic(_cls._op_name, _IGNORED.get(_op_type, ())))


def _inputs_as_attrs(node: NodeBuilder, names: dict) -> dict:
    """Read constant inputs {index: attribute name} (newer opsets) as attributes."""
    attrs = {}
    for index, name in names.items():
        value = node.known(index, name)
        if value is not None:
            attrs[name] = value.tolist()
    return attrs


@converter("Identity")
def _identity(node: NodeBuilder):
    return [node.operand(0)]


@converter("Dropout")
def _dropout(node: NodeBuilder):
    training = node.known(2, "training_mode") if node.opset >= 12 else None
    if training is not None and training.any():
        node.unsupported("training mode")
    # Inference: the output is the input, the mask (if used) all ones.
    data = node.operand(0)
    if len(node.node.output) < 2 or not node.node.output[1]:
        return [data]
    spec = node.spec(data)
    ones = np.ones((), np.bool_ if node.opset >= 10 else spec.dtype)
    return [data, *node.emit("expand", [ones], {"shape": list(spec.shape)})]


@converter("SpaceToDepth")
def _space_to_depth(node: NodeBuilder):
    data = node.operand(0)
    attrs = {"blocksize": node.attr("blocksize")}
    mode = node.attr("mode", "DCR")
    if mode == "DCR":
        return node.emit("space_to_depth", [data], attrs)
    if mode != "CRD":
        node.unsupported(f"mode '{mode}'")
    # CRD (SpaceToDepth-28): blocks of each spatial axis go after the channels.
    (spec,) = OPS["space_to_depth"].infer([node.spec(data)], attrs)  # checks rank and divisibility
    (n, c, h, w), b = node.spec(data).shape, attrs["blocksize"]
    (x,) = node.emit("reshape", [data], {"shape": [n, c, h // b, b, w // b, b]})
    (x,) = node.emit("transpose", [x], {"perm": [0, 1, 3, 5, 2, 4]})
    return node.emit("reshape", [x], {"shape": list(spec.shape)})


@converter("Constant")
def _constant(node: NodeBuilder):
    ((name, value),) = node.attributes.items()
    if name == "sparse_value":
        node.unsupported("a sparse constant")
    dtypes = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64, "value_ints": np.int64}
    return [np.asarray(value, dtype=dtypes.get(name))]


@converter("Shape")
def _shape(node: NodeBuilder):
    shape = np.array(node.spec(node.operand(0)).shape, dtype=np.int64)
    rank = len(shape)
    start, end = node.attr("start", 0), node.attr("end", rank)
    return [shape[slice(start, end)]]


@converter("Size")
def _size(node: NodeBuilder):
    return [np.array(node.spec(node.operand(0)).numel, dtype=np.int64)]


@converter("ConstantOfShape")
def _constant_of_shape(node: NodeBuilder):
    shape = node.known(0, "shape")
    fill = node.attr("value", np.zeros(1, np.float32))
    return [np.full(tuple(shape), fill.reshape(()), dtype=fill.dtype)]


@converter("Range")
def _range(node: NodeBuilder):
    start, limit, delta = (node.known(i, name) for i, name in enumerate(("start", "limit", "delta")))
    # float16 is computed in float32 (Range-27's default stash_type), then rounded.
    stash = np.float64 if node.attr("stash_type", 1) == 11 else np.float32
    dtype = stash if start.dtype == np.float16 else start.dtype
    return [np.arange(start, limit, delta, dtype=dtype).astype(start.dtype)]


@converter("Reshape")
def _reshape(node: NodeBuilder):
    data = node.operand(0)
    target = node.known(1, "shape") if node.opset >= 5 else np.array(node.attr("shape"))
    shape = data_movement.ReshapeOp.resolve_shape(node.spec(data).shape, target.tolist(), node.attr("allowzero", 0))
    return node.emit("reshape", [data], {"shape": shape})


@converter("Expand")
def _expand(node: NodeBuilder):
    data = node.operand(0)
    shape = broadcast(node.spec(data).shape, node.known(1, "shape").tolist())
    return node.emit("expand", [data], {"shape": list(shape)})


@converter("Squeeze", "Unsqueeze")
def _squeeze(node: NodeBuilder):
    attrs = dict(node.attributes) if node.opset < 13 else _inputs_as_attrs(node, {1: "axes"})
    mnemonic = "squeeze" if node.node.op_type == "Squeeze" else "unsqueeze"
    return node.emit(mnemonic, [node.operand(0)], attrs)


@converter("Slice")
def _slice(node: NodeBuilder):
    if node.opset < 10:
        attrs = dict(node.attributes)
    else:
        attrs = _inputs_as_attrs(node, {1: "starts", 2: "ends", 3: "axes", 4: "steps"})
    attrs = data_movement.SliceOp.normalize(node.spec(node.operand(0)).shape, **attrs)
    return node.emit("slice", [node.operand(0)], attrs)


@converter("Concat")
def _concat(node: NodeBuilder):
    (result, *rest) = node.operands()
    for operand in rest:
        (result,) = node.emit("concat", [result, operand], {"axis": node.attr("axis")})
    return [result]


@converter("Split")
def _split(node: NodeBuilder):
    axis = normalize_axis(node.attr("axis", 0), node.spec(node.operand(0)).rank)
    if node.opset < 13:
        sizes = node.attr("split")
    else:
        sizes = node.known(1, "split")
        sizes = None if sizes is None else sizes.tolist()
    if sizes is None:
        extent = node.spec(node.operand(0)).shape[axis]
        sizes = data_movement.SplitOp.resolve_split(extent, len(node.node.output))
    return node.emit("split", [node.operand(0)], {"axis": axis, "split": sizes})


@converter("Resize", "Upsample")
def _resize(node: NodeBuilder):
    data = node.operand(0)
    shape = node.spec(data).shape
    attrs = {"mode": node.attr("mode", "nearest")}
    if node.node.op_type == "Upsample" or node.opset < 11:
        # Resize-10 and Upsample: scales only, asymmetric coordinates, "simple" rounding.
        scales = node.attr("scales") if node.opset < 9 else node.known(1, "scales")
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="simple")
        attrs.update(data_movement.ResizeOp.resolve(shape, scales=np.asarray(scales, np.float32)))
        return node.emit("resize", [data], attrs)
    if node.attr("antialias", 0):
        node.unsupported("antialias")
    if node.attr("coordinate_transformation_mode") == "tf_crop_and_resize":
        node.unsupported("coordinate_transformation_mode 'tf_crop_and_resize'")
    for name in ("coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside"):
        if name in node.attributes:
            attrs[name] = node.attributes[name]
    scales, sizes = node.known(2, "scales"), node.known(3, "sizes")
    attrs.update(
        data_movement.ResizeOp.resolve(
            shape,
            scales=scales if scales is not None and scales.size else None,
            sizes=sizes if sizes is not None and sizes.size else None,
            axes=node.attr("axes"),
            keep_aspect_ratio_policy=node.attr("keep_aspect_ratio_policy", "stretch"),
        )
    )
    return node.emit("resize", [data], attrs)


@converter("Tile")
def _tile(node: NodeBuilder):
    return node.emit("tile", [node.operand(0)], _inputs_as_attrs(node, {1: "repeats"}))


@converter("Pad")
def _pad(node: NodeBuilder):
    attrs = {"mode": node.attr("mode", "constant")}
    if node.opset < 11:
        attrs["pads"] = node.attr("pads")
        attrs["constant_value"] = node.attr("value", 0.0)
    else:
        rank = node.spec(node.operand(0)).rank
        pads = node.known(1, "pads").tolist()
        axes = node.known(3, "axes")
        if axes is not None:
            full = [0] * (2 * rank)
            for i, axis in enumerate(axes.tolist()):
                full[axis % rank], full[axis % rank + rank] = pads[i], pads[i + len(axes)]
            pads = full
        attrs["pads"] = pads
        value = node.known(2, "constant_value")
        attrs["constant_value"] = 0.0 if value is None else float(value.reshape(()))
    return node.emit("pad", [node.operand(0)], attrs)


@converter("Clip")
def _clip(node: NodeBuilder):
    attrs = {}
    if node.opset < 11:
        attrs = {k: node.attributes[k] for k in ("min", "max") if k in node.attributes}
    else:
        for index, name in ((1, "min"), (2, "max")):
            value = node.known(index, name)
            if value is not None:
                attrs[name] = float(value.reshape(()))
    return node.emit("clip", [node.operand(0)], attrs)


@converter("Cast")
def _cast(node: NodeBuilder):
    return node.emit("cast", [node.operand(0)], {"to": dtype_name(_onnx_dtype(node.attr("to")))})


@converter("Sum", "Mean", "Max", "Min")
def _variadic(node: NodeBuilder):
    mnemonic = {"Sum": "add", "Mean": "add", "Max": "max", "Min": "min"}[node.node.op_type]
    operands = node.operands()
    (result,) = operands[:1]
    for operand in operands[1:]:
        (result,) = node.emit(mnemonic, [result, operand])
    if node.node.op_type == "Mean":
        count = np.array(len(operands), dtype=node.spec(result).dtype)
        (result,) = node.emit("div", [result, count])
    return [result]


@converter("Pow")
def _pow(node: NodeBuilder):
    base, exponent = node.operand(0), node.operand(1)
    base_type, exponent_type = node.spec(base).dtype, node.spec(exponent).dtype
    if base_type == exponent_type:
        return node.emit("pow", [base, exponent])
    # The exponent may have another type (Pow-12+): compute in the common type (as
    # numpy does), the result has the base's type.
    common = np.result_type(base_type, exponent_type)
    if base_type != common:
        (base,) = node.emit("cast", [base], {"to": dtype_name(common)})
    if exponent_type != common:
        (exponent,) = node.emit("cast", [exponent], {"to": dtype_name(common)})
    (result,) = node.emit("pow", [base, exponent])
    return [result] if base_type == common else node.emit("cast", [result], {"to": dtype_name(base_type)})


@converter("LayerNormalization")
def _layer_norm(node: NodeBuilder):
    outputs = _generic("layer_normalization", _IGNORED["LayerNormalization"])(node)
    if not any(node.node.output[1:]):
        return outputs
    # Mean and InvStdDev (outputs 1 and 2), in the stash type with the normalized axes kept.
    x = node.operand(0)
    spec = node.spec(x)
    stash = np.dtype(np.float64 if node.attr("stash_type", 1) == 11 else np.float32)
    if spec.dtype != stash:
        (x,) = node.emit("cast", [x], {"to": dtype_name(stash)})
    reduce = {"axes": list(range(node.attr("axis", -1) % spec.rank, spec.rank)), "keepdims": 1}
    (mean,) = node.emit("reduce_mean", [x], reduce)
    (centered,) = node.emit("sub", [x, mean])
    (square,) = node.emit("mul", [centered, centered])
    (var,) = node.emit("reduce_mean", [square], reduce)
    (var,) = node.emit("add", [var, np.array(node.attr("epsilon", 1e-5), dtype=stash)])
    (std,) = node.emit("sqrt", [var])
    return outputs + [mean, *node.emit("reciprocal", [std])]


def _reduction(mnemonic: str, axes_input_since: int):
    def convert(node: NodeBuilder):
        attrs = {k: v for k, v in node.attributes.items() if k != "axes"}
        if node.opset < axes_input_since:
            if "axes" in node.attributes:
                attrs["axes"] = node.attributes["axes"]
        else:
            attrs.update(_inputs_as_attrs(node, {1: "axes"}))
        return node.emit(mnemonic, [node.operand(0)], attrs)

    return convert


for _op_type, _mnemonic in {
    "ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max", "ReduceMin": "reduce_min",
    "ReduceProd": "reduce_prod", "ReduceL2": "reduce_l2", "ReduceSumSquare": "reduce_sum_square",
    "ReduceLogSumExp": "reduce_log_sum_exp", "ReduceL1": "reduce_l1", "ReduceLogSum": "reduce_log_sum",
}.items():
    CONVERTERS[_op_type] = _reduction(_mnemonic, 13 if _op_type == "ReduceSum" else 18)


@converter("Softmax", "LogSoftmax")
def _softmax(node: NodeBuilder):
    mnemonic = "softmax" if node.node.op_type == "Softmax" else "log_softmax"
    data = node.operand(0)
    spec = node.spec(data)
    if node.opset >= 13:
        return node.emit(mnemonic, [data], {"axis": node.attr("axis", -1)})
    # Before opset 13 the input is coerced to 2-D at ``axis`` (default 1).
    axis = node.attr("axis", 1) % max(spec.rank, 1)
    if axis == spec.rank - 1:
        return node.emit(mnemonic, [data], {"axis": -1})
    rows = int(np.prod(spec.shape[:axis], dtype=np.int64))
    (flat,) = node.emit("reshape", [data], {"shape": [rows, spec.numel // max(rows, 1)]})
    (result,) = node.emit(mnemonic, [flat], {"axis": -1})
    return node.emit("reshape", [result], {"shape": list(spec.shape)})


@converter("BatchNormalization")
def _batch_norm(node: NodeBuilder):
    if node.attr("training_mode", 0):
        node.unsupported("training mode")
    return _generic("batch_normalization", _IGNORED["BatchNormalization"])(node)


def supported_onnx_ops() -> list:
    return sorted(CONVERTERS)
