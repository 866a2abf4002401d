"""ONNX operator -> ECG converters, registered in ``CONVERTERS`` by ONNX op type.

Most ONNX ops convert generically: the ECG op of the same name takes the ONNX
attributes of the same names. The converters below handle what differs: inputs that
must be compile-time constants (they become attributes), opset differences, variadic
ops, and the ops that only exist at import time (Shape, ConstantOfShape, Range, ...).
A converter gets a ``NodeBuilder`` and returns the node's output values.
"""

import numpy as np

from ..ecg import OPS
from ..ecg.ops.reshape import ReshapeOp
from ..ecg.ops.resize import ResizeOp
from ..ecg.ops.slicing import SliceOp, SplitOp
from ..ecg.shapes import broadcast, normalize_axis
from ..ecg.tensor_spec import BFLOAT16, check_shape, dtype_name, element_kind
from .casts import emit_cast
from .node_builder import NodeBuilder
from .onnx_types import OnnxImportError, onnx_dtype
from .recurrent_converters import RECURRENT_CONVERTERS

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

for _mnemonic, _cls in OPS.items():
    for _op_type in _cls.ONNX:
        CONVERTERS.setdefault(_op_type, _generic(_mnemonic, _IGNORED.get(_op_type, ())))


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
    shape = node.required(0, "shape")
    fill = node.attr("value", np.zeros(1, np.float32))
    check_shape(tuple(shape))
    # A read-only broadcast of the scalar, never allocated: a splat constant, which the
    # light models' weights are (filled, VGG-19's took seconds to import).
    return [np.broadcast_to(fill.reshape(()), tuple(shape))]


@converter("Range")
def _range(node: NodeBuilder):
    start, limit, delta = (node.required(i, name) for i, name in enumerate(("start", "limit", "delta")))
    # float16 and bfloat16 are computed in float32 (Range-27's default stash_type), then rounded.
    stash = np.float64 if node.attr("stash_type", 1) == 11 else np.float32
    dtype = stash if start.dtype in (np.float16, BFLOAT16) else start.dtype
    if delta == 0:
        node.unsupported("Range with delta 0")
    check_shape((max(0, int(np.ceil((limit - start) / delta))),))  # before allocating it
    return [np.arange(start, limit, delta, dtype=dtype).astype(start.dtype)]


@converter("Reshape")
def _reshape(node: NodeBuilder):
    data = node.operand(0)
    target = node.required(1, "shape") if node.opset >= 5 else np.array(node.attr("shape"))
    shape = ReshapeOp.resolve_shape(node.spec(data).shape, target.tolist(), node.attr("allowzero", 0))
    return node.emit("reshape", [data], {"shape": shape})


@converter("Expand")
def _expand(node: NodeBuilder):
    data = node.operand(0)
    shape = broadcast(node.spec(data).shape, node.required(1, "shape").tolist())
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
    missing = [name for name in ("starts", "ends") if name not in attrs]
    if missing:
        raise OnnxImportError(f"{node.info}: {' and '.join(missing)} missing")
    attrs = SliceOp.normalize(node.spec(node.operand(0)).shape, **attrs)
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
        sizes = SplitOp.resolve_split(extent, len(node.node.output))
    return node.emit("split", [node.operand(0)], {"axis": axis, "split": sizes})


@converter("Resize", "Upsample")
def _resize(node: NodeBuilder):
    data = node.operand(0)
    shape = node.spec(data).shape
    attrs = {"mode": node.attr("mode", "nearest")}
    if node.node.op_type == "Upsample" or node.opset < 11:
        # Resize-10 and Upsample: scales only, asymmetric coordinates, "simple" rounding.
        scales = node.attr("scales") if node.opset < 9 else node.required(1, "scales")
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="simple")
        attrs.update(ResizeOp.resolve(shape, scales=np.asarray(scales, np.float32)))
        return node.emit("resize", [data], attrs)
    for name in ("coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "antialias",
                 "extrapolation_value"):
        if name in node.attributes:
            attrs[name] = node.attributes[name]
    scales, sizes = node.known(2, "scales"), node.known(3, "sizes")
    axes = node.attr("axes")
    attrs.update(
        ResizeOp.resolve(
            shape,
            scales=scales if scales is not None and scales.size else None,
            sizes=sizes if sizes is not None and sizes.size else None,
            axes=axes,
            keep_aspect_ratio_policy=node.attr("keep_aspect_ratio_policy", "stretch"),
        )
    )
    if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        roi = node.known(1, "roi")
        if roi is None or not roi.size:
            node.unsupported("tf_crop_and_resize without a roi")
        attrs["roi"] = ResizeOp.full_roi(len(shape), roi, axes)
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
        pads = node.required(1, "pads").tolist()
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
    return emit_cast(node, node.operand(0), onnx_dtype(node.attr("to")))


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



@converter("Shrink")
def _shrink(node: NodeBuilder):
    """x + bias below -lambd, x - bias above lambd, else 0: two selects, no ECG op of its own."""
    x = node.operand(0)
    dtype = node.spec(x).dtype
    if element_kind(dtype) != "f":
        node.unsupported(f"Shrink on {dtype_name(dtype)} tensors (floating-point only)")
    lambd, bias = node.attr("lambd", 0.5), np.array(node.attr("bias", 0.0), dtype)
    (below,) = node.emit("less", [x, np.array(-lambd, dtype)])
    (above,) = node.emit("greater", [x, np.array(lambd, dtype)])
    (plus,) = node.emit("add", [x, bias])
    (minus,) = node.emit("sub", [x, bias])
    (inner,) = node.emit("where", [above, minus, np.zeros((), dtype)])
    return node.emit("where", [below, plus, inner])


CONVERTERS.update(RECURRENT_CONVERTERS)
