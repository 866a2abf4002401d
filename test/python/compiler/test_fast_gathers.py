"""Gathers compiled for the host through their vectorized reads (``flat_reads``), checked
exactly against onnxruntime (a gather moves elements: no rounding, so no tolerance), and
GridSample's zero padding (within test_node_suite_ops' tolerance: weighted sums of at
most 16 taps).

The shapes make every path count: rows wider than one vector and not a multiple of it
(the remainder), negative indices, the gathered axis innermost (a vector.gather), a
GatherElements along an outer axis whose indices change along the innermost one (the
case an index sum must not be mistaken for a contiguous row), and a gather of a
strided slice in the same kernel (read from the slice's source at start + step * i).
"""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.compiler import Artifact, compile_model
from test_node_suite_ops import ATOL, RTOL, check, one_node


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


# ----- GridSample: one gather of every tap at indices per output pixel -----


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_grid_sample_zeros_with_infinite_data(mode):
    """Taps outside the input read the appended zero with weight 0: an infinity in the
    data adds nothing to the pixels that do not read it (0 * inf would be NaN), and the
    pixels reading it are infinite or NaN as onnxruntime's."""
    rng = np.random.default_rng(34)
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    x[0, 1, 0, :] = np.inf  # the top row, which taps above the input sit next to
    x[1, :, 4, 5] = -np.inf
    feeds = {"x": x, "grid": rng.uniform(-1.3, 1.3, (2, 7, 6, 2)).astype(np.float32)}
    check(one_node("GridSample", feeds, opset=20, mode=mode, padding_mode="zeros"), feeds)


def test_grid_sample_zeros_at_non_finite_coordinates():
    """A NaN or infinite coordinate samples outside the input: 0 (onnxruntime casts it to
    an integer, undefined in C++, so only the other pixels are compared with it)."""
    rng = np.random.default_rng(35)
    feeds = {"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32),
             "grid": rng.uniform(-1, 1, (1, 5, 5, 2)).astype(np.float32)}
    feeds["grid"][0, 1, 2, 0] = np.nan
    feeds["grid"][0, 3, 0, 1] = np.inf
    feeds["grid"][0, 4, 4, 0] = -np.inf
    model = one_node("GridSample", feeds, opset=20, mode="linear", padding_mode="zeros")
    (got,) = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)
    (want,) = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    finite = np.isfinite(feeds["grid"]).all(-1)[:, None].repeat(4, 1)
    np.testing.assert_array_equal(got[~finite], 0)
    np.testing.assert_allclose(got[finite], want[finite], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("target", ["vulkan", "opencl"])
def test_gathers_on_the_gpu_targets(target, tmp_path):
    """GatherND rows, a GridSample and a nearest Resize (whose reads along the width
    are gathers) in one graph on the GPU targets: generics that gather stay scalar
    there (vectorized, a vector.gather, which SPIR-V and OpenCL C lack: this Resize
    did not compile for either before)."""
    rng = np.random.default_rng(36)
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (1, 3, 7, 2)).astype(np.float32)
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["r"], mode="nearest"),
             helper.make_node("GridSample", ["x", "grid"], ["s"], mode="linear"),
             helper.make_node("Reshape", ["x", "rows_shape"], ["rows"]),
             helper.make_node("GatherND", ["rows", "ids"], ["n"])]
    constants = [helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2]),
                 helper.make_tensor("rows_shape", TensorProto.INT64, [2], [20, 6]),
                 helper.make_tensor("ids", TensorProto.INT64, [5, 1], [3, -1, 0, 19, 7])]
    graph = helper.make_graph(nodes, "gpu_gathers", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
        helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid.shape),
    ], [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("r", "s", "n")], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx.save(model, str(tmp_path / "model.onnx"))
    compile_model(tmp_path / "model.onnx", tmp_path / "out", target=target)
    got, _ = Artifact(tmp_path / "out").run([x, grid])
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "grid": grid})
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(got[2], want[2])
