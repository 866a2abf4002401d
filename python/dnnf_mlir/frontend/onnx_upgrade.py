"""Old ONNX files made importable: opsets below the importer's range are upgraded with
``onnx.version_converter``, after rewriting the legacy forms it gets wrong.

Before opset 7, a binary op broadcast only with ``broadcast=1``, B aligned at A's
``axis``; the converter turns that ``axis`` into an Unsqueeze of B with one trailing
axis per rank A has over B, which is right only when B ends at A's last axis (axis =
rank A - rank B): B = [C] at axis 1 of [N, C, H, W] would become [C, 1, 1, 1] and
broadcast to [C, C, H, W]. PRelu's per-channel slope ([C] against [N, C, ...]) is left
as it is, and opset 7's unidirectional broadcasting aligns it with the last axis
instead. Both are rewritten here first, as explicit Unsqueezes (which the importer
folds into the constants). IR version 3 required every initializer to be listed as
a graph input; files that do not list them are raised to IR version 4, which is what
they are, so that ``onnx.checker`` accepts them.
"""

import logging

import onnx
from onnx import helper, shape_inference

from .onnx_types import OnnxImportError

logger = logging.getLogger(__name__)

# Ops that took ``broadcast``/``axis`` attributes before opset 7.
LEGACY_BROADCAST_OPS = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}
BROADCAST_OPSET = 7  # from here on numpy-style broadcasting, no ``broadcast``/``axis`` attributes


def default_opset(model: onnx.ModelProto) -> int | None:
    """The version of the default ONNX domain the model imports (None: it imports none)."""
    versions = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    return versions.get("ai.onnx")


def upgrade(model: onnx.ModelProto, min_opset: int) -> onnx.ModelProto:
    """``model``, or an upgraded copy when it needs one (the argument is never changed):
    raised to IR version 4 when it is an IR-3 file with unlisted initializers, and to
    ``min_opset`` (says so through logging) when its default-domain opset is below it."""
    listed = {i.name for i in model.graph.input}
    unlisted_initializers = model.ir_version < 4 and any(i.name not in listed for i in model.graph.initializer)
    opset = default_opset(model)
    old_opset = opset is not None and opset < min_opset
    if not (unlisted_initializers or old_opset):
        return model
    upgraded = onnx.ModelProto()
    upgraded.CopyFrom(model)
    if unlisted_initializers:
        upgraded.ir_version = 4
    if not old_opset:
        return upgraded
    if opset < BROADCAST_OPSET:
        _rewrite_legacy_broadcasts(upgraded, opset)
    try:
        upgraded = onnx.version_converter.convert_version(upgraded, min_opset)
    except Exception as error:  # noqa: BLE001 - the converter raises untyped C++ failures
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise OnnxImportError(f"opset {opset} is below {min_opset} and onnx.version_converter cannot upgrade it: {first}") from None
    logger.warning("'%s': opset %d upgraded to opset %d with onnx.version_converter", model.graph.name, opset, min_opset)
    return upgraded


def _ranks(model: onnx.ModelProto) -> dict:
    """Value name -> rank, where ONNX's shape inference knows it."""
    inferred = shape_inference.infer_shapes(model).graph
    ranks = {i.name: len(i.dims) for i in inferred.initializer}
    for info in [*inferred.input, *inferred.value_info, *inferred.output]:
        tensor = info.type.tensor_type
        if info.type.HasField("tensor_type") and tensor.HasField("shape"):
            ranks.setdefault(info.name, len(tensor.shape.dim))
    return ranks


def _rewrite_legacy_broadcasts(model: onnx.ModelProto, opset: int):
    """Make legacy broadcasting explicit, in place, as described in the module docstring."""
    ranks = _ranks(model) if any(_legacy_broadcast(node) for node in model.graph.node) else {}
    rewritten = []
    for index, node in enumerate(model.graph.node):
        kind = _legacy_broadcast(node)
        if kind:
            rank_x, rank_b = (_rank(ranks, node, i, index, opset) for i in (0, 1))
            if kind == "axis":  # B = input 1 aligned at ``axis`` of A: append A's remaining axes
                axis = _attributes(node)["axis"]
                axes = range(rank_b, rank_x - axis % rank_x) if rank_x else range(0)
                _drop_attribute(node, "axis")
            else:  # PRelu's slope [C] on axis 1 of [N, C, D1, ...]: [C, 1, ...]
                axes = range(1, rank_x - 1) if rank_b == 1 else range(0)
            if axes:
                aligned = f"{node.input[1]}__aligned_{index}"
                rewritten.append(helper.make_node("Unsqueeze", [node.input[1]], [aligned], axes=list(axes)))
                node.input[1] = aligned
        rewritten.append(node)
    del model.graph.node[:]
    model.graph.node.extend(rewritten)


def _legacy_broadcast(node: onnx.NodeProto) -> str | None:
    """The legacy form ``node`` may use: "axis" (a binary op broadcasting at an axis), "prelu", or None."""
    if node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "PRelu" and len(node.input) > 1:
        return "prelu"
    attrs = _attributes(node)
    if node.op_type in LEGACY_BROADCAST_OPS and attrs.get("broadcast") and "axis" in attrs:
        return "axis"
    return None


def _rank(ranks: dict, node: onnx.NodeProto, input_index: int, index: int, opset: int) -> int:
    name = node.input[input_index]
    if name not in ranks:
        raise OnnxImportError(
            f"node '{node.name or f'{node.op_type}_{index}'}' (ai.onnx::{node.op_type}, opset {opset}): "
            f"legacy broadcasting needs the rank of input {input_index} ('{name}'), which shape inference cannot tell"
        )
    return ranks[name]


def _attributes(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _drop_attribute(node: onnx.NodeProto, name: str):
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)
