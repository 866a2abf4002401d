"""TopK on the GPU targets (Vulkan on lavapipe, OpenCL on PoCL), against onnxruntime.

TopK is a loop over rows (``conversion/ecg_to_linalg/top_k.py``); on a GPU each row runs
on a thread of its own (``codegen/gpu/loop_kernels.py``), and a single row (whose loop
folds away, leaving a few loops and loads) in a single invocation: that case was refused
("a sequential loop ... still returns a value after bufferization"). The inputs hold
ties (values drawn from a few eighths, exact in fp16 too), so the indices check the
order onnxruntime gives ties (the lower index first); indices are compared exactly and
values too (TopK selects, it computes nothing), in fp16 as well: the inputs are exact
in half precision. With ``sorted=0`` ONNX leaves the order free, so each row's
(value, index) pairs are compared as sets.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.tools.common import onnxruntime_session

TARGETS = ("vulkan", "opencl")


def _model(shape, k: int, neighbours: bool, **attrs) -> onnx.ModelProto:
    """TopK of ``x`` (of ``Relu(x)`` then its values negated, both returned, with
    ``neighbours``)."""
    source = "r" if neighbours else "x"
    nodes = [helper.make_node("TopK", [source, "k"], ["v", "indices"], **attrs)]
    outputs = ["v", "indices"]
    if neighbours:
        nodes = [helper.make_node("Relu", ["x"], ["r"])] + nodes + [helper.make_node("Neg", ["v"], ["n"])]
        outputs = ["r", "n", "indices"]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(name, TensorProto.INT64 if name == "indices" else TensorProto.FLOAT, None)
         for name in outputs],
        [helper.make_tensor("k", TensorProto.INT64, [1], [k])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


CASES = {  # name -> (shape, k, neighbours, attributes)
    "one_row_smallest": ([32], 26, False, {"axis": -1, "largest": 0}),
    "one_row_k_1": ([97], 1, False, {"axis": 0}),
    "one_row_k_n": ([13], 13, False, {"axis": -1, "largest": 0}),
    "rows_last_axis": ([37, 53], 5, False, {"axis": -1}),
    "rows_negative_middle_axis": ([5, 31, 7], 4, False, {"axis": -2, "largest": 0}),
    "rows_first_axis_k_n": ([11, 3, 5], 11, False, {"axis": 0}),
    "many_rows_k_1": ([131, 67], 1, False, {"axis": 1, "largest": 0}),
    "unsorted": ([7, 41], 6, False, {"axis": 1, "sorted": 0}),
    "fused_neighbours": ([3, 29, 2], 7, True, {"axis": 1}),
    "fused_neighbours_one_row": ([61], 9, True, {"axis": 0, "largest": 0}),
}


def _rows_as_sets(values, indices, axis: int):
    """Each row's (value, index) pairs in a canonical order (index order)."""
    order = np.argsort(indices, axis=axis, kind="stable")
    return np.take_along_axis(values, order, axis), np.take_along_axis(indices, order, axis)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", CASES)
def test_top_k_matches_onnxruntime(name, target, precision, tmp_path):
    shape, k, neighbours, attrs = CASES[name]
    model = _model(shape, k, neighbours, **attrs)
    rng = np.random.default_rng(sum(map(ord, name)))
    x = (rng.integers(-12, 12, shape) / 8).astype(np.float32)  # ties in every row, exact in fp16
    feeds = {"x": x}
    got = InferenceSession(model, target=target, precision=precision, use_cache=False).run(None, feeds)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    want = onnxruntime_session(path).run(None, feeds)
    if not attrs.get("sorted", 1):
        got[-2:] = _rows_as_sets(*got[-2:], attrs["axis"])
        want[-2:] = _rows_as_sets(*want[-2:], attrs["axis"])
    assert got[-1].dtype == np.int64
    for ours, theirs in zip(got, want):
        np.testing.assert_array_equal(ours, theirs)


def test_ties_are_in_the_inputs():
    """The inputs above do hold ties within the k selected (else the tie order is unchecked)."""
    shape, k, _, attrs = CASES["rows_last_axis"]
    x = (np.random.default_rng(sum(map(ord, "rows_last_axis"))).integers(-12, 12, shape) / 8)
    top = -np.sort(-x, axis=attrs["axis"])[:, :k]
    assert (np.diff(top, axis=1) == 0).any()
