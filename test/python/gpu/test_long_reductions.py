"""Reductions of many elements to few results on the GPU targets (Vulkan on lavapipe,
OpenCL on PoCL), against a float64 reference.

Such a reduction is split: in two launches, partial results over many workgroups, then
their combination (``codegen/gpu/partial_reductions.py``), or where its innermost
reduction has no divisor to cut it by (a prime length) or it is short, over one
workgroup's threads (``long_reductions.py``). Before, one thread looped over every
element, and lavapipe cuts a shader's loop off after 65535 iterations: ReduceSum of
[1000, 1000] returned 160 for 998.6, silently.

Tolerance: a float32 sum of n terms in any order is within n * 2^-24 * sum |x| of the
exact one (Higham); the bound here, ``8 sqrt(n) 2^-24 sum |x|``, is what blocked
partial sums keep in practice and still fails a sum missing a single element of the
standard normal inputs (about 0.8; the bound is below 0.02 for 10^5 elements). A
maximum is exact. In fp16 (inputs rounded to half, accumulation in fp32) the
bound adds the rounding of each input and of the result, 2^-11 (sum |x| + |want|).
"""

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.checking import compare
from dnnf_mlir.tools.common import onnxruntime_session

TARGETS = ("vulkan", "opencl")


def _model(op_type: str, shape, axes, keepdims: int, then_mul: bool = False) -> onnx.ModelProto:
    """``op_type`` of ``x`` over ``axes`` (every axis when None), times 0.5 when ``then_mul``."""
    inputs, initializers = ["x"], []
    if axes is not None:
        inputs.append("axes")
        initializers.append(helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes))
    nodes = [helper.make_node(op_type, inputs, ["r" if then_mul else "y"], keepdims=keepdims)]
    if then_mul:
        initializers.append(helper.make_tensor("half", TensorProto.FLOAT, [], [0.5]))
        nodes.append(helper.make_node("Mul", ["r", "half"], ["y"]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _reference(op_type: str, x, axes, keepdims: int, then_mul: bool):
    """The float64 result and the |x| summed per result (for the tolerance)."""
    x = x.astype(np.float64)
    axis = tuple(range(x.ndim)) if axes is None else tuple(axes)
    reduce = {"ReduceSum": lambda v: v.sum(axis), "ReduceMean": lambda v: v.mean(axis),
              "ReduceMax": lambda v: v.max(axis), "ReduceMin": lambda v: v.min(axis),
              "ReduceSumSquare": lambda v: (v * v).sum(axis), "ReduceL2": lambda v: np.sqrt((v * v).sum(axis)),
              "ReduceLogSumExp": lambda v: np.log(np.exp(v).sum(axis))}[op_type]
    want = reduce(x) * (0.5 if then_mul else 1.0)
    magnitude = np.abs(x * x if op_type in ("ReduceSumSquare", "ReduceL2") else np.exp(x) if op_type ==
                       "ReduceLogSumExp" else x).sum(axis)
    if keepdims:
        want, magnitude = np.expand_dims(want, axis), np.expand_dims(magnitude, axis)
    return want, magnitude


CASES = {  # name -> (op, shape, axes, keepdims, then Mul)
    "sum_every_axis_prime_dims": ("ReduceSum", [317, 331], None, 0, False),
    "sum_every_axis_1e6": ("ReduceSum", [1000, 1000], None, 1, False),
    "sum_long_rows": ("ReduceSum", [2, 100000], [1], 1, False),
    "sum_long_prime_rows": ("ReduceSum", [2, 100003], [-1], 0, False),
    "sum_short_one_workgroup": ("ReduceSum", [101, 103], None, 1, False),
    "mean_every_axis": ("ReduceMean", [3, 257, 263], None, 0, False),
    "max_every_axis": ("ReduceMax", [509, 211], None, 1, False),
    "min_odd_rows": ("ReduceMin", [3, 65537], [1], 1, False),
    "sum_of_squares_then_mul": ("ReduceSumSquare", [3, 37, 997], None, 1, True),
    "l2_every_axis": ("ReduceL2", [640, 200], None, 0, False),
    "log_sum_exp_every_axis": ("ReduceLogSumExp", [128, 401], None, 0, False),
}


def _check(name: str, target: str, precision: str, x):
    op_type, shape, axes, keepdims, then_mul = CASES[name]
    model = _model(op_type, shape, axes, keepdims, then_mul)
    (got,) = InferenceSession(model, target=target, precision=precision, use_cache=False).run(None, {"x": x})
    rounded = x.astype(np.float16).astype(np.float32) if precision == "fp16" else x
    want, magnitude = _reference(op_type, rounded, axes, keepdims, then_mul)
    assert got.shape == want.shape
    n = x.size // want.size
    bound = 8 * math.sqrt(n) * 2.0 ** -24 * magnitude * (0.5 if then_mul else 1.0)
    if op_type in ("ReduceL2", "ReduceLogSumExp"):  # the error of the sum, through sqrt or log
        bound = bound / (2 * want if op_type == "ReduceL2" else np.exp(want)) + 2.0 ** -23 * np.abs(want)
    if precision == "fp16":
        bound = bound + 2.0 ** -11 * (magnitude + np.abs(want))
    error = np.abs(got.astype(np.float64) - want)
    assert np.isnan(got).sum() == np.isnan(want).sum()
    finite = ~np.isnan(want)
    assert (error[finite] <= bound[finite]).all(), f"error {error.max()} over the bound {bound.min()}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", CASES)
def test_long_reduction_matches_float64(name, target):
    x = np.random.default_rng(sum(map(ord, name))).standard_normal(CASES[name][1]).astype(np.float32)
    _check(name, target, "fp32", x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["sum_every_axis_prime_dims", "sum_long_rows", "mean_every_axis", "max_every_axis"])
def test_long_reduction_in_fp16(name, target):
    """Half storage, fp32 accumulation: a sum of 10^5 halves accumulated in half would be
    off by far more than the bound (its spacing at 300 is 0.25)."""
    x = np.random.default_rng(sum(map(ord, name))).standard_normal(CASES[name][1]).astype(np.float32)
    _check(name, target, "fp16", x)


@pytest.mark.parametrize("target", TARGETS)
def test_maximum_propagates_nan(target):
    """A NaN anywhere makes the maximum NaN (ONNX, onnxruntime), in whichever partial it falls."""
    x = np.random.default_rng(7).standard_normal(CASES["max_every_axis"][1]).astype(np.float32)
    x[300, 17] = np.nan
    (got,) = InferenceSession(_model("ReduceMax", [509, 211], None, 1), target=target,
                              use_cache=False).run(None, {"x": x})
    assert np.isnan(got).all()


@pytest.mark.parametrize("target", TARGETS)
def test_mean_of_rows_divides_by_the_full_count(target):
    """A mean of long rows: the partial sums of each row combined, then divided by the
    row's length, not by a part's."""
    x = np.full([2, 100000], 3.0, dtype=np.float32)
    x[1] = -1.5
    (got,) = InferenceSession(_model("ReduceMean", [2, 100000], [1], 0), target=target,
                              use_cache=False).run(None, {"x": x})
    np.testing.assert_allclose(got, [3.0, -1.5], rtol=1e-6)


def _graph(nodes, shape) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


READERS = {  # a split reduction read by an op over the whole tensor
    "centred": (_graph([helper.make_node("ReduceMean", ["x"], ["m"], keepdims=1),
                        helper.make_node("Sub", ["x", "m"], ["y"])], [300, 331])),
    "softmax_of_long_rows": _graph([helper.make_node("Softmax", ["x"], ["y"], axis=1)], [2, 100000]),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", READERS)
def test_split_reduction_read_by_the_whole_tensor(name, target, tmp_path):
    """x - mean(x) and a softmax of rows of 10^5 (its maximum and sum both split) against
    onnxruntime (``checking.compare``: |got - want| <= 3e-5 + 1e-4 |want|)."""
    model = READERS[name]
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    (got,) = InferenceSession(model, target=target, use_cache=False).run(None, {"x": x})
    onnx.save(model, str(tmp_path / "model.onnx"))
    (want,) = onnxruntime_session(tmp_path / "model.onnx").run(None, {"x": x})
    result = compare(got, want)
    assert result.ok and not result.degenerate, result
