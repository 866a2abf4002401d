"""Hostile ONNX files: bytes flipped and cut, protobuf fields mutated through the
onnx API, and hand-made invalid graphs (wrong shapes, dangling names, cycles, huge
dimensions, unsupported types and ops, out-of-range constant indices).

Random cases may happen to stay valid (a flipped byte inside a weight); the
hand-made ones (``must_fail``) are invalid by construction, so a tool that accepts
one has a bug too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .seeds import SEEDS


@dataclass(frozen=True)
class Case:
    """One hostile input: its file content, the file suffix the tools see, and
    whether every tool must reject it."""

    name: str
    data: bytes
    suffix: str
    must_fail: bool = False


def _onnx(name: str, model: onnx.ModelProto, must_fail: bool = True) -> Case:
    return Case(name, model.SerializeToString(), ".onnx", must_fail)


# ----- bytes -----

def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def splice(rng: random.Random, data: bytes) -> bytes:
    """Delete or duplicate a random run of bytes (shifts every later field)."""
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.randint(1, 64))
    return data[:start] + (data[start:end] * 2 if rng.random() < 0.5 else b"") + data[end:]


# ----- protobuf fields -----

HUGE = 1 << 40
ODD_DIMS = (0, -1, -7, HUGE, 1 << 62, 3)
ODD_OPSETS = (0, 1, 6, 29, 1000)
# Every element type onnx knows; the importer supports a handful.
ELEMENT_TYPES = tuple(v for v in TensorProto.DataType.values() if v != TensorProto.UNDEFINED) + (0, 99)
UNSUPPORTED_OPS = ("Loop", "If", "Scan", "NonMaxSuppression", "StringNormalizer", "Frobnicate", "")


def _value_infos(graph):
    return list(graph.input) + list(graph.output)


def _set_dim(rng, model):
    infos = [v for v in _value_infos(model.graph) if v.type.tensor_type.shape.dim]
    dim = rng.choice(rng.choice(infos).type.tensor_type.shape.dim)
    if rng.random() < 0.2:
        dim.dim_param = rng.choice(("N", "", "x y"))
    else:
        dim.dim_value = rng.choice(ODD_DIMS)


def _set_element_type(rng, model):
    targets = [v.type.tensor_type for v in _value_infos(model.graph)] + list(model.graph.initializer)
    target = rng.choice(targets)
    if isinstance(target, TensorProto):
        target.data_type = rng.choice(ELEMENT_TYPES)
    else:
        target.elem_type = rng.choice(ELEMENT_TYPES)


def _set_op_type(rng, model):
    rng.choice(model.graph.node).op_type = rng.choice(UNSUPPORTED_OPS + tuple(n.op_type for n in model.graph.node))


def _dangle(rng, model):
    node = rng.choice(model.graph.node)
    if node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(("nowhere", "", node.output[0]))


def _reorder(rng, model):
    nodes = list(model.graph.node)
    rng.shuffle(nodes)
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _attribute(rng, model):
    node = rng.choice([n for n in model.graph.node if n.attribute] or model.graph.node)
    if not node.attribute:
        node.attribute.append(helper.make_attribute("axis", rng.randint(-9, 9)))
        return
    attribute = rng.choice(node.attribute)
    choice = rng.randrange(5)
    if choice == 0:
        node.attribute.remove(attribute)
    elif choice == 1:
        attribute.i = rng.choice((-(1 << 40), -9, 9, 1 << 40))
    elif choice == 2:
        attribute.type = rng.choice(list(onnx.AttributeProto.AttributeType.values()))
    elif choice == 3:
        del attribute.ints[:]
        attribute.ints.extend(rng.choice(([], [0], [-5, 99], [1 << 40] * 4, [0] * 9)))
    else:
        attribute.name = rng.choice(("bogus", "axis", "perm", "pads"))


def _opset(rng, model):
    if rng.random() < 0.3:
        model.opset_import.add(domain=rng.choice(("com.example", "ai.onnx.ml")), version=1)
        rng.choice(model.graph.node).domain = model.opset_import[-1].domain
    else:
        model.opset_import[0].version = rng.choice(ODD_OPSETS)


def _initializer(rng, model):
    init = rng.choice(model.graph.initializer)
    choice = rng.randrange(4)
    if choice == 0:
        model.graph.initializer.remove(init)
    elif choice == 1:
        init.raw_data = init.raw_data[: rng.randrange(len(init.raw_data) + 1)]
    elif choice == 2:
        init.dims[rng.randrange(len(init.dims))] = rng.choice(ODD_DIMS)
    else:
        init.data_location = TensorProto.EXTERNAL
        init.external_data.add(key="location", value=rng.choice(("../../etc/passwd", "missing.bin", "/dev/zero")))


def _outputs(rng, model):
    if rng.random() < 0.5:
        model.graph.output.add().CopyFrom(helper.make_tensor_value_info("nowhere", TensorProto.FLOAT, [1]))
    else:
        del model.graph.output[:]


FIELD_MUTATIONS = (_set_dim, _set_element_type, _set_op_type, _dangle, _reorder, _attribute, _opset, _initializer,
                   _outputs)


def mutate_fields(rng: random.Random, model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for _ in range(rng.randint(1, 3)):
        rng.choice(FIELD_MUTATIONS)(rng, model)
    return model


def random_cases(rng: random.Random, count: int) -> list:
    """``count`` random mutations of the seed models: a third byte-level, the rest
    protobuf-field-level."""
    cases = []
    seeds = {name: make() for name, make in SEEDS.items()}
    for index in range(count):
        seed_name = rng.choice(sorted(seeds))
        seed = seeds[seed_name]
        if index % 3 == 0:
            mutate = rng.choice((flip_bytes, truncate, splice))
            data = mutate(rng, seed.SerializeToString())
            cases.append(Case(f"{seed_name}-{mutate.__name__}-{index}", data, ".onnx"))
        else:
            cases.append(Case(f"{seed_name}-fields-{index}", mutate_fields(rng, seed).SerializeToString(), ".onnx"))
    return cases


def truncations(model: onnx.ModelProto, count: int) -> list:
    """The serialized ``model`` cut at ``count`` offsets spread over the file."""
    data = model.SerializeToString()
    offsets = sorted({len(data) * i // count for i in range(count)})
    return [Case(f"truncated-at-{offset}", data[:offset], ".onnx", must_fail=True) for offset in offsets]


# ----- hand-made invalid graphs -----

def _graph_model(nodes, inputs, outputs, initializers=(), opset=17, name="hostile") -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _f(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _gather_model(indices: np.ndarray, op="Gather", data_shape=(5, 3), axis=0) -> onnx.ModelProto:
    out_shape = list(data_shape[:axis]) + list(indices.shape) + list(data_shape[axis + 1:]) if op == "Gather" \
        else list(indices.shape)
    return _graph_model(
        [helper.make_node(op, ["x", "i"], ["y"], name="pick", axis=axis)],
        [_f("x", list(data_shape))], [_f("y", out_shape)], [numpy_helper.from_array(indices, "i")],
    )


def handmade_cases() -> list:
    """Invalid graphs, one per hostile feature the issue names; each must be rejected."""
    relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    cases = [
        Case("empty-file", b"", ".onnx", True),
        Case("not-protobuf", b"\xff" * 64, ".onnx", True),
        Case("mlir-text-as-onnx", b"module {}\n", ".onnx", True),
        Case("onnxtxt-garbage", b"<ir_version: 8, opset_import: [\"\" : 17]>\nagraph (float[N] x) => (y) {\n y = Relu(", ".onnxtxt", True),
        Case("onnxtxt-binary", b"\x00\x01\xff\xfe", ".onnxtxt", True),
        _onnx("wrong-shape-add", _graph_model(
            [helper.make_node("Add", ["x", "b"], ["y"], name="add")], [_f("x", [2, 3])], [_f("y", [2, 3])],
            [numpy_helper.from_array(np.ones((4, 5), np.float32), "b")])),
        _onnx("wrong-shape-matmul", _graph_model(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [_f("x", [2, 3])], [_f("y", [2, 4])],
            [numpy_helper.from_array(np.ones((5, 4), np.float32), "w")])),
        _onnx("wrong-shape-reshape", _graph_model(
            [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")], [_f("x", [2, 3])], [_f("y", [7])],
            [numpy_helper.from_array(np.array([7], np.int64), "s")])),
        _onnx("dangling-input", _graph_model(
            [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")], [_f("x", [2])], [_f("y", [2])])),
        _onnx("dangling-output", _graph_model(relu, [_f("x", [2])], [_f("z", [2])])),
        _onnx("cycle", _graph_model(
            [helper.make_node("Add", ["x", "b"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["b"], name="second")],
            [_f("x", [2])], [_f("b", [2])])),
        _onnx("self-loop", _graph_model([helper.make_node("Relu", ["y"], ["y"], name="loop")], [_f("x", [2])], [_f("y", [2])])),
        _onnx("huge-input", _graph_model(relu, [_f("x", [1 << 20, 1 << 20])], [_f("y", [1 << 20, 1 << 20])])),
        _onnx("huge-expand", _graph_model(
            [helper.make_node("Expand", ["x", "s"], ["y"], name="expand")], [_f("x", [1])], [_f("y", [1 << 40])],
            [numpy_helper.from_array(np.array([1 << 40], np.int64), "s")])),
        _onnx("huge-constant-of-shape", _graph_model(
            [helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"), helper.make_node("Add", ["x", "c"], ["y"], name="add")],
            [_f("x", [1])], [_f("y", [1 << 20, 1 << 20])],
            [numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "s")])),
        _onnx("huge-initializer-dims", _huge_initializer()),
        _onnx("negative-dim", _graph_model(relu, [_f("x", [-3])], [_f("y", [-3])])),
        _onnx("unsupported-op", _graph_model([helper.make_node("NonMaxSuppression", ["x"], ["y"], name="nms")],
                                             [_f("x", [2])], [_f("y", [2])])),
        _onnx("unknown-op", _graph_model([helper.make_node("Frobnicate", ["x"], ["y"], name="frob")],
                                         [_f("x", [2])], [_f("y", [2])])),
        _onnx("unknown-domain", _unknown_domain()),
        _onnx("opset-too-new", _graph_model(relu, [_f("x", [2])], [_f("y", [2])], opset=1000)),
        _onnx("opset-zero", _graph_model(relu, [_f("x", [2])], [_f("y", [2])], opset=0)),
        _onnx("gather-index-too-big", _gather_model(np.array([0, 5], np.int64))),
        _onnx("gather-index-too-small", _gather_model(np.array([-6], np.int64))),
        _onnx("gather-axis-out-of-range", _gather_model(np.array([0], np.int64), axis=2, data_shape=(5, 3))),
        _onnx("gather-elements-index", _gather_model(np.array([[0, 9, 0]], np.int64), op="GatherElements")),
        _onnx("gather-float-indices", _gather_model(np.array([0.0], np.float32))),
        _onnx("slice-axis-out-of-range", _graph_model(
            [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"], name="slice")], [_f("x", [4])], [_f("y", [2])],
            [numpy_helper.from_array(np.array([0], np.int64), "s"), numpy_helper.from_array(np.array([2], np.int64), "e"),
             numpy_helper.from_array(np.array([3], np.int64), "a")])),
        _onnx("slice-zero-step", _graph_model(
            [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice")], [_f("x", [4])], [_f("y", [2])],
            [numpy_helper.from_array(np.array([0], np.int64), n) for n in ("s", "a", "st")]
            + [numpy_helper.from_array(np.array([2], np.int64), "e")])),
        _onnx("pad-crops-too-much", _graph_model(
            [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")], [_f("x", [4])], [_f("y", [1])],
            [numpy_helper.from_array(np.array([-3, -3], np.int64), "p")])),
        _onnx("pad-wrong-length", _graph_model(
            [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")], [_f("x", [4])], [_f("y", [6])],
            [numpy_helper.from_array(np.array([1, 1, 1], np.int64), "p")])),
        _onnx("transpose-bad-perm", _graph_model(
            [helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 0])], [_f("x", [2, 3])], [_f("y", [3, 2])])),
        _onnx("conv-kernel-larger-than-input", _graph_model(
            [helper.make_node("Conv", ["x", "k"], ["y"], name="conv")], [_f("x", [1, 1, 2, 2])], [_f("y", [1, 1, 1, 1])],
            [numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "k")])),
        _onnx("concat-mismatch", _graph_model(
            [helper.make_node("Concat", ["x", "c"], ["y"], name="concat", axis=0)], [_f("x", [2, 3])], [_f("y", [4, 3])],
            [numpy_helper.from_array(np.ones((2, 4), np.float32), "c")])),
        _onnx("split-too-many", _graph_model(
            [helper.make_node("Split", ["x", "s"], ["a", "b"], name="split", axis=0)], [_f("x", [4])], [_f("a", [3]), _f("b", [3])],
            [numpy_helper.from_array(np.array([3, 3], np.int64), "s")])),
        _onnx("truncated-raw-data", _truncated_initializer()),
        _onnx("external-data-escape", _external_initializer()),
    ]
    for elem in (TensorProto.STRING, TensorProto.COMPLEX64, TensorProto.FLOAT8E8M0, TensorProto.INT4,
                 TensorProto.FLOAT4E2M1, TensorProto.UINT4, TensorProto.COMPLEX128, 99):
        cases.append(_onnx(f"unsupported-type-{elem}", _graph_model(
            [helper.make_node("Identity", ["x"], ["y"], name="id")], [_f("x", [2], elem)], [_f("y", [2], elem)])))
    return cases


def _huge_initializer() -> onnx.ModelProto:
    init = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20])
    return _graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [_f("x", [1])],
                        [_f("y", [1 << 20, 1 << 20])], [init])


def _truncated_initializer() -> onnx.ModelProto:
    init = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    init.raw_data = init.raw_data[:10]
    return _graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [_f("x", [4, 4])], [_f("y", [4, 4])], [init])


def _external_initializer() -> onnx.ModelProto:
    init = numpy_helper.from_array(np.ones(4, np.float32), "w")
    init.ClearField("raw_data")
    init.data_location = TensorProto.EXTERNAL
    init.external_data.add(key="location", value="../../../../etc/passwd")
    return _graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [_f("x", [4])], [_f("y", [4])], [init])


def _unknown_domain() -> onnx.ModelProto:
    model = _graph_model([helper.make_node("Relu", ["x"], ["y"], name="relu", domain="com.example")],
                         [_f("x", [2])], [_f("y", [2])])
    model.opset_import.add(domain="com.example", version=1)
    return model
