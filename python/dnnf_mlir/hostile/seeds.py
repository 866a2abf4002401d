"""The valid models the hostile-input campaign mutates: small, each a few ops that
the importer, interpreter and code generator all cover, between them touching
indices (Gather, GatherElements), windows (Conv, MaxPool), data movement (Slice,
Pad, Concat, Transpose, Reshape) and reductions."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _model(nodes, name, inputs, outputs, initializers) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="dnnf-hostile")
    onnx.checker.check_model(model, full_check=True)
    return model


def _tensor(name, array) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


def embedding() -> onnx.ModelProto:
    """BERT's first step in miniature: token ids (a graph input) index an embedding
    table (100 rows: the ids dnnf-run draws are in [0, 100)), then a projection, a
    ReLU and a reshape."""
    rng = np.random.default_rng(0)
    return _model(
        [helper.make_node("Gather", ["table", "ids"], ["e"], name="embed", axis=0),
         helper.make_node("MatMul", ["e", "w"], ["h"], name="project"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Reshape", ["r", "shape"], ["y"], name="flatten")],
        "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])],
        [_tensor("table", rng.standard_normal((100, 16)).astype(np.float32)),
         _tensor("w", rng.standard_normal((16, 8)).astype(np.float32)),
         _tensor("shape", np.array([1, -1], np.int64))],
    )


def convolution() -> onnx.ModelProto:
    """Conv -> ReLU -> MaxPool -> Flatten -> Gemm -> Softmax."""
    rng = np.random.default_rng(1)
    return _model(
        [helper.make_node("Conv", ["x", "k", "kb"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
         helper.make_node("Gemm", ["f", "g", "gb"], ["z"], name="fc", transB=1),
         helper.make_node("Softmax", ["z"], ["y"], name="softmax", axis=1)],
        "convolution",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [_tensor("k", rng.standard_normal((4, 2, 3, 3)).astype(np.float32)),
         _tensor("kb", rng.standard_normal(4).astype(np.float32)),
         _tensor("g", rng.standard_normal((5, 64)).astype(np.float32)),
         _tensor("gb", rng.standard_normal(5).astype(np.float32))],
    )


def data_movement() -> onnx.ModelProto:
    """Slice, Pad, Concat, Transpose, GatherElements with constant indices, ReduceSum."""
    return _model(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"], name="slice"),
         helper.make_node("Pad", ["s", "pads"], ["p"], name="pad", mode="constant"),
         helper.make_node("Concat", ["p", "p"], ["c"], name="concat", axis=1),
         helper.make_node("Transpose", ["c"], ["t"], name="transpose", perm=[1, 0]),
         helper.make_node("GatherElements", ["t", "gi"], ["g"], name="gather_elements", axis=0),
         helper.make_node("ReduceSum", ["g", "raxes"], ["y"], name="reduce", keepdims=0)],
        "data_movement",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [_tensor("starts", np.array([1], np.int64)), _tensor("ends", np.array([5], np.int64)),
         _tensor("axes", np.array([1], np.int64)), _tensor("pads", np.array([0, 1, 0, 1], np.int64)),
         _tensor("gi", np.array([[0, 1, 2, 3], [3, 2, 1, 0]], np.int64)),
         _tensor("raxes", np.array([0], np.int64))],
    )


SEEDS = {"embedding": embedding, "convolution": convolution, "data_movement": data_movement}
