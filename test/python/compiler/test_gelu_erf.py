"""BERT's exact GELU, ``0.5 x (1 + erf(x / sqrt(2)))`` after a MatMul + bias, erf's
quotient a reciprocal estimate and a Newton step where vectorized
(``codegen/approximations``). Checked against onnxruntime over inputs that reach erf's
clamp at +-4 and its small arguments, fused and unfused, on 1 and 2 threads; 96
columns: whole vectors on AVX2 and AVX-512 plus, at 2 threads, split column tiles."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.tools.common import onnxruntime_session

ROWS, DEPTH, COLUMNS = 24, 32, 96


def gelu_model(path):
    rng = np.random.default_rng(3)
    weight = (rng.standard_normal((DEPTH, COLUMNS)) / np.sqrt(DEPTH)).astype(np.float32)
    bias = rng.standard_normal(COLUMNS).astype(np.float32)
    constants = [helper.make_tensor(name, TensorProto.FLOAT, [], [value])
                 for name, value in (("sqrt2", np.sqrt(2.0)), ("one", 1.0), ("half", 0.5))]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["scaled"]),
        helper.make_node("Erf", ["scaled"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["h", "e1"], ["he"]),
        helper.make_node("Mul", ["he", "half"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ROWS, DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, ROWS, COLUMNS])],
        [onnx.numpy_helper.from_array(weight, "w"), onnx.numpy_helper.from_array(bias, "b"), *constants])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return gelu_model(tmp_path_factory.mktemp("gelu") / "gelu.onnx")


@pytest.mark.parametrize("fusion,threads", [("dnnf", 1), ("none", 1), ("dnnf", 2)])
def test_gelu_matches_onnxruntime(model, tmp_path, fusion, threads):
    # Pre-activations from about -9 to 9 (past erf's clamp at |x/sqrt(2)| = 4) and
    # rows of small ones, where erf(x) ~ 2x/sqrt(pi) shows a wrong scale at once.
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((1, ROWS, DEPTH)) * np.linspace(0.01, 3.0, ROWS)[None, :, None]).astype(np.float32)
    compile_model(model, tmp_path / "out", fusion=fusion, threads=threads)
    (got,), _ = Artifact(tmp_path / "out").run([x])
    want = onnxruntime_session(model).run(None, {"x": x})[0]
    assert np.abs(want).max() > 6 and (np.abs(want) < 1e-2).any()
    # erf's approximation is within 4e-7 of erf; the reciprocals add a few ulp.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
