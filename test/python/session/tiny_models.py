"""Small ONNX models the session and cache tests compile in about a second each."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def matmul_relu(batch="batch", name="tiny") -> onnx.ModelProto:
    """y = relu(x @ w + b), x: [batch, 16] (``batch`` symbolic unless an int); the
    weight has 128 elements, enough to be kept in weights.bin rather than in the code."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
         helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Sigmoid", ["a"], ["s"])],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 8]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [batch, 8])],
        [w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dnnf-tests")
    model.model_version = 3
    model.metadata_props.add(key="purpose", value="session tests")
    return model


def two_inputs() -> onnx.ModelProto:
    """z = ids (int64 [batch, 'seq']) cast to float * scale (float [4]) + mask (bool [batch, 'seq']
    cast), with one input given no shape at all: what onnxruntime shows as ``[]``."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["f", "m"], ["z0"]),
         helper.make_node("ReduceSum", ["scale"], ["total"], keepdims=0),
         helper.make_node("Mul", ["z0", "total"], ["z"])],
        "two_inputs",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", "seq"]),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", "seq"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
