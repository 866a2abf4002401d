"""Ops over tensors with trailing unit dims (codegen/cpu/unit_dims.py folds them before
the CPU schedule): compiled for the host against onnxruntime, and the plan checked to
vectorize along a dim of extent > 1 (one thread: no case is big enough to be split).

Each case has a trailing dim of 1 where the old schedule made vectors of one element:
element-wise chains with broadcast operands, the [N, C, 1, 1] block of a
squeeze-and-excitation after its global pool, layer normalization and softmax whose
rows end in a unit dim, a reduction keeping its dims, and a convolution of width 1
with its activation (a contraction epilogue, left unfolded). Odd sizes (5, 17, 33, 37)
leave partial vectors. Inputs are standard normal. Tolerance rtol 1e-5, atol 1e-5:
float32 sums over at most 4,096 elements in another order than onnxruntime's.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu import lower_to_llvm
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.transforms.pipeline import build_pass_manager

RTOL, ATOL = 1e-5, 1e-5
RNG = np.random.default_rng(29)


def randn(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model(nodes, inputs: dict, constants: dict = None, opset: int = 17):
    graph = helper.make_graph(
        nodes, "unit_dims", [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in (constants or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def elementwise(shape, bias_shape):
    x, z = randn(*shape), randn(*shape)
    nodes = [helper.make_node("Mul", ["x", "z"], ["t"]), helper.make_node("Add", ["t", "b"], ["u"]),
             helper.make_node("Sigmoid", ["u"], ["s"]), helper.make_node("Mul", ["s", "x"], ["y"])]
    return model(nodes, {"x": x, "z": z}, {"b": randn(*bias_shape)}), {"x": x, "z": z}


def squeeze_excitation(n, c, size):
    x = randn(n, c, size, size)
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["p"]), helper.make_node("Mul", ["p", "s"], ["q"]),
             helper.make_node("Sigmoid", ["q"], ["g"]), helper.make_node("Mul", ["x", "g"], ["y"])]
    return model(nodes, {"x": x}, {"s": randn(1, c, 1, 1)}), {"x": x}


def layer_norm(shape, axis):
    x = randn(*shape)
    normalized = shape[axis:]
    node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=axis, epsilon=1e-5)
    return model([node], {"x": x}, {"g": randn(*normalized), "b": randn(*normalized)}), {"x": x}


def softmax(shape, axis):
    x = randn(*shape)
    return model([helper.make_node("Softmax", ["x"], ["y"], axis=axis)], {"x": x}, opset=13), {"x": x}


def reduce_sum(shape, axis):
    x = randn(*shape)
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)
    return model([node], {"x": x}, {"axes": np.array([axis], np.int64)}, opset=13), {"x": x}


def conv_width_one():
    x = randn(1, 8, 9, 1)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 0, 1, 0]), helper.make_node("Relu", ["c"], ["y"])]
    return model(nodes, {"x": x}, {"w": randn(16, 8, 3, 1) * 0.3, "b": randn(16)}), {"x": x}


def attention_of_one_feature(rows):
    """Scores of [rows, 1, 1], a softmax over rows of one element between two matmuls: its
    reductions cannot fold, and neither may the element-wise ops between them."""
    a, b = randn(rows, 1, 1), randn(rows, 1, 1)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["s"]), helper.make_node("Mul", ["s", "c"], ["t"]),
             helper.make_node("Softmax", ["t"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "a"], ["y"])]
    return model(nodes, {"a": a, "b": b}, {"c": np.float32(0.5)}, opset=13), {"a": a, "b": b}


CASES = {
    "elementwise-64x64x1": lambda: elementwise((64, 64, 1), (64, 1)),
    "elementwise-odd": lambda: elementwise((5, 33, 1, 1), (33, 1, 1)),
    "squeeze-excitation": lambda: squeeze_excitation(2, 96, 7),
    "layer-norm-64x64x1": lambda: layer_norm((7, 64, 64, 1), 1),
    "layer-norm-odd": lambda: layer_norm((3, 17, 5, 1), 1),
    "softmax-unit-last": lambda: softmax((6, 37, 1), 1),
    "reduce-sum-keepdims": lambda: reduce_sum((7, 33, 1), 1),
    "conv-width-one": conv_width_one,
    "attention-of-one-feature": lambda: attention_of_one_feature(5),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_onnxruntime(case):
    onnx_model, feeds = CASES[case]()
    want = onnxruntime.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds)
    got = InferenceSession(onnx_model, use_cache=False, threads=1).run(None, feeds)
    assert got[0].shape == want[0].shape
    np.testing.assert_allclose(got[0], want[0], rtol=RTOL, atol=ATOL)


def vector_shapes(onnx_model) -> list:
    """The vector shapes of the CPU plan's vectorized ops, and whether row groups formed."""
    context = dnnf_mlir.make_context()
    with context:
        module = import_onnx(onnx_model, context=context)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        schedules = lower_to_llvm(module, "host", threads=1).schedules
    return [s.details["vector"] for s in schedules if "vector" in s.details], \
        [s for s in schedules if s.strategy == "row-fused"]


@pytest.mark.parametrize("case", ["elementwise-64x64x1", "elementwise-odd", "squeeze-excitation"])
def test_vectors_along_a_dim_above_one(case):
    """No element-wise op keeps vectors of one element along its trailing unit dim."""
    vectors, _ = vector_shapes(CASES[case]()[0])
    assert vectors and all(v[-1] > 1 for v in vectors), vectors


@pytest.mark.parametrize("case", ["layer-norm-64x64x1", "softmax-unit-last"])
def test_rows_ending_in_a_unit_dim_are_row_groups(case):
    _, groups = vector_shapes(CASES[case]()[0])
    assert len(groups) == 1
