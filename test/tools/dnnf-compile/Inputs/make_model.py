"""Write a small ONNX model with seeded random weights:
python make_model.py conv|conv_bn|matmul|matmul8|unsupported OUT.onnx

conv: x[1,16,12,12] -> Conv(32 filters 3x3, pad 1) + bias -> Relu.
conv_bn: x[1,16,12,12] -> Conv(32 filters 3x3, pad 1) -> BatchNormalization -> Relu
  (ecg-rewrite folds the normalization into the convolution).
matmul: x[24,64] -> MatMul(64x48) -> Add bias.
matmul8: the same over 8 rows, too few for the schedule to pack B (``matmul.packs_b``) on any
  CPU, so its weights stay a plain matrix rather than panels (``dnnf-weight-panels``).
unsupported: x[1,4,9] -> Col2Im (opset 18), an operator dnnf-mlir does not import.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

kind, path = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


if kind == "conv":
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 12, 12])
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    weights = [weight("w", 32, 16, 3, 3), weight("b", 32)]
elif kind == "conv_bn":
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 12, 12])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    variance = numpy_helper.from_array(rng.uniform(0.5, 2.0, 32).astype(np.float32), "var")
    weights = [weight("w", 32, 16, 3, 3), weight("scale", 32), weight("bias", 32), weight("mean", 32), variance]
elif kind == "unsupported":
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], name="col2im")]
    weights = [numpy_helper.from_array(np.array([4, 4], np.int64), "image_shape"),
               numpy_helper.from_array(np.array([2, 2], np.int64), "block_shape")]
else:
    rows = 8 if kind == "matmul8" else 24
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 48])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    weights = [weight("w", 64, 48), weight("b", 48)]
graph = helper.make_graph(nodes, kind, [x], [y], weights)
onnx.save(helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 18 if kind == "unsupported" else 17)]), path)
