"""Gathers compiled for the host through their vectorized reads (``flat_reads``), checked
exactly against onnxruntime (a gather moves elements: no rounding, so no tolerance).

The shapes make every path count: rows wider than one vector and not a multiple of it
(the remainder), negative indices, the gathered axis innermost (a vector.gather), a
GatherElements along an outer axis whose indices change along the innermost one (the
case an index sum must not be mistaken for a contiguous row), and a gather of a
strided slice in the same kernel (read from the slice's source at start + step * i).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

from test_node_suite_ops import check, one_node


def _indices(rng, size: int, shape) -> np.ndarray:
    """Indices into an axis of ``size``, a third of them negative (counting from the end)."""
    values = rng.integers(0, size, shape)
    return np.where(rng.random(shape) < 1 / 3, values - size, values).astype(np.int64)


def test_gather_nd_rows():
    rng = np.random.default_rng(30)
    feeds = {"data": rng.standard_normal((300, 70)).astype(np.float32), "indices": _indices(rng, 300, (40, 1))}
    check(one_node("GatherND", feeds, opset=13), feeds)


@pytest.mark.parametrize("axis,shape", [(0, (50, 33)), (1, (3, 50, 40)), (-1, (6, 50))])
def test_gather(axis, shape):
    rng = np.random.default_rng(31)
    feeds = {"data": rng.standard_normal(shape).astype(np.float32), "indices": _indices(rng, 50, (4, 5))}
    check(one_node("Gather", feeds, opset=13, axis=axis), feeds)


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_elements(axis):
    rng = np.random.default_rng(32)
    feeds = {"data": rng.standard_normal((7, 45)).astype(np.float32)}
    feeds["indices"] = _indices(rng, feeds["data"].shape[axis], (5, 45) if axis == 0 else (7, 37))
    check(one_node("GatherElements", feeds, opset=13, axis=axis), feeds)


def test_gather_of_a_strided_slice():
    """Rows 1, 3, 5, ... and columns from 2 of the data, then rows of those."""
    rng = np.random.default_rng(33)
    data = rng.standard_normal((40, 50)).astype(np.float32)
    indices = _indices(rng, 20, (9,))
    cut = helper.make_node("Slice", ["data", "starts", "ends", "axes", "steps"], ["cut"])
    gather = helper.make_node("Gather", ["cut", "indices"], ["y0"], axis=0)
    constants = [helper.make_tensor(name, TensorProto.INT64, [2], values)
                 for name, values in (("starts", [1, 2]), ("ends", [40, 50]), ("axes", [0, 1]), ("steps", [2, 1]))]
    graph = helper.make_graph([cut, gather], "strided", [
        helper.make_tensor_value_info("data", TensorProto.FLOAT, data.shape),
        helper.make_tensor_value_info("indices", TensorProto.INT64, indices.shape),
    ], [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [9, 48])], constants)
    check(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"data": data, "indices": indices})
