"""ScatterElements and ScatterND as the ECG ops scatter_elements / scatter_nd: every
reduction, negative and repeated indices, integer data, compiled (a copy then one loop
over the updates) and interpreted, against onnxruntime; and the errors for bad input.

Float outputs are compared with rtol 1e-6 (a reduction combines the updates in the
same order as onnxruntime, so only the last bit may differ); integer outputs exactly.
"""

import time

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.frontend.onnx_types import OnnxImportError
from dnnf_mlir.interpreter import interpret

REDUCTIONS = ["none", "add", "mul", "max", "min"]
_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
          np.dtype(np.int64): TensorProto.INT64}


def scatter_model(op_type: str, feeds: dict, opset: int = 18, **attrs):
    inputs = [helper.make_tensor_value_info(name, _TYPES[value.dtype], value.shape) for name, value in feeds.items()]
    output = helper.make_tensor_value_info("out", _TYPES[feeds["data"].dtype], feeds["data"].shape)
    node = helper.make_node(op_type, list(feeds), ["out"], **attrs)
    graph = helper.make_graph([node], op_type.lower(), inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(model, feeds: dict):
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    compiled = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)
    interpreted = interpret(import_onnx(model), list(feeds.values()))
    for got in (compiled, interpreted):
        assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=0)
    assert not np.array_equal(want[0], feeds["data"])  # the updates changed the data: the check can fail


def elements_feeds(rng, reduction: str, dtype=np.float32):
    """Data 6x9x5, updates 4x7x3 along ``axis`` 1 (part of each other axis), negative indices;
    repeated positions only when reduced (ONNX leaves repeated plain writes unordered)."""
    data = rng.integers(-9, 9, (6, 9, 5)).astype(dtype)
    if reduction == "none":
        positions = np.stack([rng.permutation(9)[:7] for _ in range(4 * 3)], -1).reshape(7, 4, 3).transpose(1, 0, 2)
    else:
        positions = rng.integers(0, 9, (4, 7, 3))
    indices = np.where(rng.random(positions.shape) < 0.5, positions - 9, positions).astype(np.int64)
    updates = rng.integers(-4, 5, (4, 7, 3)).astype(dtype)
    return {"data": data, "indices": indices, "updates": updates}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_scatter_elements(reduction, dtype):
    feeds = elements_feeds(np.random.default_rng(1), reduction, dtype)
    check(scatter_model("ScatterElements", feeds, axis=1, reduction=reduction), feeds)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("depth", [1, 2])
def test_scatter_nd(reduction, depth):
    """Tuples of ``depth`` indices into data 5x6x4, each addressing a row of 6x4 or 4 elements."""
    rng = np.random.default_rng(2)
    shape = (5, 6, 4)
    count = 4 if reduction == "none" else 9
    linear = rng.choice(30, count, replace=reduction != "none") if depth == 2 else rng.choice(
        5, count, replace=reduction != "none")
    tuples = np.stack(np.unravel_index(linear, shape[:depth]), -1)
    tuples = np.where(rng.random(tuples.shape) < 0.5, tuples - np.array(shape[:depth]), tuples).astype(np.int64)
    feeds = {"data": rng.integers(-9, 9, shape).astype(np.float32), "indices": tuples.reshape(1, count, depth),
             "updates": rng.integers(-4, 5, (1, count) + shape[depth:]).astype(np.float32)}
    check(scatter_model("ScatterND", feeds, reduction=reduction), feeds)


def test_scatter_11_without_reduction_and_scatter_9():
    feeds = elements_feeds(np.random.default_rng(3), "none")
    check(scatter_model("ScatterElements", feeds, opset=11, axis=1), feeds)
    check(scatter_model("Scatter", feeds, opset=9, axis=1), feeds)


def test_large_scatter_runs_in_time_linear_in_its_updates():
    """A KV-cache-sized write the one-hot import refused (4096x512 data, 64 rows): one pass,
    well under the 100 ms an all-against-all match of its 134M elements would take at best."""
    rng = np.random.default_rng(4)
    feeds = {"data": rng.standard_normal((4096, 512)).astype(np.float32),
             "indices": rng.choice(4096, (64, 1), replace=False).astype(np.int64),
             "updates": rng.standard_normal((64, 512)).astype(np.float32)}
    model = scatter_model("ScatterND", feeds)
    session = InferenceSession(model, use_cache=False, threads=1)
    session.run(None, feeds)
    start = time.perf_counter()
    (got,) = session.run(None, feeds)
    elapsed = time.perf_counter() - start
    want = feeds["data"].copy()
    want[feeds["indices"][:, 0]] = feeds["updates"]
    np.testing.assert_array_equal(got, want)
    assert elapsed < 0.1, f"{elapsed * 1e3:.1f} ms"


def test_bad_scatters_are_refused_naming_the_node():
    rng = np.random.default_rng(5)
    feeds = elements_feeds(rng, "add")
    with pytest.raises(OnnxImportError, match=r"ScatterElements, opset 18\).*reduction 'sum' is not one of"):
        import_onnx(scatter_model("ScatterElements", feeds, axis=1, reduction="sum"))
    feeds["updates"] = feeds["updates"][:, :5]
    with pytest.raises(OnnxImportError, match=r"ScatterElements, opset 18\).*must have one shape"):
        import_onnx(scatter_model("ScatterElements", feeds, axis=1))
    nd = {"data": np.zeros((5, 6), np.float32), "indices": np.zeros((3, 3), np.int64),
          "updates": np.zeros((3,), np.float32)}
    with pytest.raises(OnnxImportError, match=r"ScatterND, opset 18\).*tuples of at most 2 indices"):
        import_onnx(scatter_model("ScatterND", nd))


def test_constant_indices_out_of_range_are_the_nodes_error():
    """A scatter of constants is folded at import: an index out of range is reported then."""
    constants = {"data": np.zeros((4, 3), np.float32), "indices": np.array([[7, 0, 0]], np.int64),
                 "updates": np.ones((1, 3), np.float32)}
    nodes = [helper.make_node("ScatterElements", list(constants), ["s"]), helper.make_node("Add", ["s", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
                              [numpy_helper.from_array(value, name) for name, value in constants.items()])
    with pytest.raises(OnnxImportError, match=r"ScatterElements, opset 18\): scatter_elements index 7 is out of range"):
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
