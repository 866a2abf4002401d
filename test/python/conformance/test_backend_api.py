"""DnnfBackend's own behaviour: eager and lazy import, constant inputs, run_node."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from dnnf_mlir.frontend.onnx_importer import OnnxImportError
from dnnf_mlir.onnx_backend import DnnfBackend


def _model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _relu_model(dims):
    return _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
    )


def test_static_shapes_import_in_prepare():
    rep = DnnfBackend.prepare(_relu_model([2, 3]))
    assert len(rep.modules) == 1
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    (y,) = rep.run([x])
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert rep.run({"x": x}).y.shape == (2, 3)


def test_symbolic_shapes_import_at_run_once_per_shape():
    rep = DnnfBackend.prepare(_relu_model(["N", 3]))
    assert not rep.modules
    for n in (1, 4, 1):
        (y,) = rep.run([np.full((n, 3), -1, np.float32)])
        assert y.shape == (n, 3) and not y.any()
    assert len(rep.modules) == 2


def _reshape_model():
    return _model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["d0", "d1"])],
    )


def test_runtime_shape_input_is_an_import_error():
    with pytest.raises(OnnxImportError, match="must be a compile-time constant"):
        DnnfBackend.prepare(_reshape_model())


def test_constant_inputs_bind_values_at_run():
    rep = DnnfBackend.prepare(_reshape_model(), constant_inputs=["shape"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert rep.run([x, np.array([3, 2])])[0].shape == (3, 2)
    assert rep.run([x, np.array([-1])])[0].shape == (6,)
    with pytest.raises(ValueError, match="names no graph input"):
        DnnfBackend.prepare(_reshape_model(), constant_inputs=["z"])


def test_run_node_and_devices():
    node = helper.make_node("Add", ["a", "b"], ["c"])
    a, b = np.ones((2, 2), np.float32), np.arange(2, dtype=np.float32)
    np.testing.assert_array_equal(DnnfBackend.run_node(node, [a, b])[0], a + b)
    node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"])
    (y,) = DnnfBackend.run_node(node, [a, np.array([0])], constant_inputs=["axes"])
    assert y.shape == (1, 2, 2)
    assert DnnfBackend.supports_device("CPU") and not DnnfBackend.supports_device("CUDA")
