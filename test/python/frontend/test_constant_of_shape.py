"""ConstantOfShape imports as a splat constant, never filled in memory: the shipped light
models make every weight with it (VGG-19's 143 million), and filling them took seconds."""

import tracemalloc

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir._mlir import ir
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.interpreter import interpret


def filled_weight_model(rows: int, columns: int, fill: float) -> onnx.ModelProto:
    """y = x @ W with W = ConstantOfShape([rows, columns], fill)."""
    graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["w"],
                          value=numpy_helper.from_array(np.array([fill], np.float32))),
         helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, columns])],
        [numpy_helper.from_array(np.array([rows, columns], np.int64), "shape")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def constants(module) -> list:
    """The ``value`` of every ecg.constant in ``module``'s functions."""
    return [ir.DenseElementsAttr(op.attributes["value"]) for function in module.body.operations
            for op in function.regions[0].blocks[0].operations if op.name == "ecg.constant"]


def test_a_filled_weight_is_a_splat_that_computes_as_filled():
    module = import_onnx(filled_weight_model(8, 3, 0.25))
    (weight,) = constants(module)
    assert weight.is_splat and str(weight.type) == "tensor<8x3xf32>"
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    (y,) = interpret(module, [x])
    np.testing.assert_allclose(y, x.astype(np.float64) @ np.full((8, 3), 0.25), rtol=1e-6, atol=1e-6)


def test_a_large_filled_weight_is_not_allocated():
    """256 MiB of float32 imported within a few MiB of numpy memory."""
    model = filled_weight_model(1 << 14, 1 << 12, 0.02)
    tracemalloc.start()
    try:
        module = import_onnx(model)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (weight,) = constants(module)
    assert weight.is_splat and str(weight.type) == "tensor<16384x4096xf32>"
    assert peak < 16 << 20, f"importing took {peak / 2**20:.0f} MiB"
