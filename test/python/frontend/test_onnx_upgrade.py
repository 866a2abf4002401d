"""Old ONNX files: opset < 7 upgraded (legacy broadcasting made explicit first), IR-3 files
with unlisted initializers accepted; checked by running them on the reference interpreter."""

import logging

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.frontend.onnx_importer import MIN_OPSET, OnnxImportError
from dnnf_mlir.frontend.onnx_upgrade import default_opset, upgrade
from dnnf_mlir.onnx_backend import DnnfBackend

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
C = RNG.standard_normal(3).astype(np.float32)


def _model(nodes, inputs, output_shape, initializers=(), opset=6, ir_version=3):
    graph = helper.make_graph(
        nodes, "legacy", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)],
        [numpy_helper.from_array(a, n) for n, a in initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def _run(model, *inputs):
    return DnnfBackend.prepare(model).run(list(inputs))[0]


def test_axis_broadcast_aligns_b_at_axis(caplog):
    # onnx.version_converter alone unsqueezes B = [3] to [3, 1, 1, 1] here, which broadcasts to [3, 3, 4, 5].
    model = _model([helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)],
                   [("x", X.shape), ("b", C.shape)], X.shape)
    with caplog.at_level(logging.INFO, logger="dnnf_mlir"):
        y = _run(model, X, C)
    np.testing.assert_allclose(y, X + C.reshape(3, 1, 1), rtol=1e-6)
    assert [r.getMessage() for r in caplog.records] == [
        "'legacy': opset 6 upgraded to opset 7 with onnx.version_converter"
    ]


@pytest.mark.parametrize("op, numpy_op", [("Sub", np.subtract), ("Mul", np.multiply)])
def test_axis_broadcast_of_an_initializer_ending_at_the_last_axis(op, numpy_op):
    b = RNG.standard_normal((4, 5)).astype(np.float32)
    model = _model([helper.make_node(op, ["x", "b"], ["y"], broadcast=1, axis=2)],
                   [("x", X.shape), ("b", b.shape)], X.shape, initializers=[("b", b)])
    np.testing.assert_allclose(_run(model, X), numpy_op(X, b), rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_prelu_slope_is_per_channel(shape):
    x = X.reshape(-1)[: np.prod(shape)].reshape(shape)
    model = _model([helper.make_node("PRelu", ["x", "slope"], ["y"])], [("x", shape), ("slope", C.shape)], shape,
                   initializers=[("slope", C)])
    slope = C.reshape((3,) + (1,) * (len(shape) - 2))
    np.testing.assert_allclose(_run(model, x), np.where(x < 0, x * slope, x), rtol=1e-6)


def test_ir3_initializers_not_listed_as_inputs():
    model = _model([helper.make_node("Add", ["x", "b"], ["y"])], [("x", X.shape)], X.shape,
                   initializers=[("b", C.reshape(3, 1, 1))], opset=MIN_OPSET)
    with pytest.raises(onnx.checker.ValidationError, match="not in graph input"):
        onnx.checker.check_model(model)
    upgraded = upgrade(model, MIN_OPSET)
    assert (model.ir_version, upgraded.ir_version) == (3, 4)
    np.testing.assert_allclose(_run(model, X), X + C.reshape(3, 1, 1), rtol=1e-6)


def test_current_models_are_left_alone():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", X.shape)], X.shape, opset=13, ir_version=7)
    assert upgrade(model, MIN_OPSET) is model
    assert default_opset(model) == 13


def test_unknown_rank_names_the_node():
    model = _model([helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1, name="add0")],
                   [("x", X.shape)], X.shape)
    model.graph.input.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, None))
    with pytest.raises(OnnxImportError, match=r"node 'add0' \(ai.onnx::Add, opset 6\): legacy broadcasting needs the "
                                              r"rank of input 1 \('b'\)"):
        upgrade(model, MIN_OPSET)
