"""Reductions of few results over a length with no divisor between 64 and 1024 on the
GPU targets (Vulkan on lavapipe, OpenCL on PoCL), against numpy in float64.

Such a reduction ran in one workgroup of 128 threads, each past lavapipe's 65535 loop
iterations for 8388617 elements (a prime), and was refused; it now runs as 1024 partial
results of the first 8388608 elements, their combination, and the 9 left reduced onto it
(``codegen/gpu/partial_reductions.py``) on lavapipe; PoCL, with no loop budget, keeps
it in one workgroup. The last elements are large (1e4, the maximum
for ReduceMax), so that a tail left out shows far beyond the tolerance: an fp32 sum's
rounding, sqrt(n) * 2^-24 * sum|x| (the probabilistic bound of n roundings of at most
2^-24 relative each), and with fp16 storage each input's rounding to half precision
besides, at most 2^-11 * sum|x|.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.gpu.partial_reductions import partial_reductions, split_partial_reductions

TARGETS = ("vulkan", "opencl")
PRIME = 8_388_617  # past 128 x 65535; no divisor at all
TAIL = 9  # PRIME - 1024 * 8192

REFERENCES = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max,
              "ReduceSumSquare": lambda x, axis: np.sum(x * x, axis=axis)}


def _model(op_type: str, shape, axis: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op_type, ["x", "axes"], ["y"], keepdims=0)], "reduce",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("axes", TensorProto.INT64, [1], [axis])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _tolerance(x: np.ndarray, op_type: str, axis: int, precision: str) -> np.ndarray:
    magnitude = REFERENCES[op_type](np.abs(x.astype(np.float64)), axis=axis)
    if op_type == "ReduceMax":
        return 0 if precision == "fp32" else 2.0 ** -11 * magnitude  # selects: exact but for fp16 storage
    n = x.shape[axis]
    rounding = 2.0 ** -11 if precision == "fp16" else 0.0
    return (np.sqrt(n) * 2.0 ** -24 + rounding) * magnitude


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op_type, shape, axis, precision", [
    ("ReduceSum", [PRIME], 0, "fp32"),
    ("ReduceSum", [PRIME], 0, "fp16"),
    ("ReduceMax", [PRIME], 0, "fp32"),
    ("ReduceSumSquare", [PRIME], 0, "fp32"),
    ("ReduceMean", [2, PRIME], 1, "fp32"),  # two results
    ("ReduceSum", [PRIME, 2], 0, "fp16"),  # the reduced axis first
])
def test_long_reduction_matches_numpy(op_type, shape, axis, precision, target):
    rng = np.random.default_rng(shape[axis])
    x = rng.standard_normal(shape).astype(np.float32)
    tail = [slice(None)] * len(shape)
    tail[axis] = slice(-TAIL, None)
    x[tuple(tail)] = 1e4
    model = _model(op_type, shape, axis)
    options = {"device": "lavapipe"} if target == "vulkan" else {}
    (got,) = InferenceSession(model, target=target, precision=precision, use_cache=False, **options).run(
        None, {"x": x})
    want = REFERENCES[op_type](x.astype(np.float64), axis=axis)
    tolerance = _tolerance(x, op_type, axis, precision)
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= tolerance), (got, want, tolerance)
    # the tail weighs far more than the tolerance: leaving it out would show
    left_out = REFERENCES[op_type](np.delete(x, np.s_[-TAIL:], axis=axis).astype(np.float64), axis=axis)
    assert np.all(np.abs(left_out - want) > 10 * tolerance)


SUM_OF_PRIME = f"""
func.func @sum(%x: tensor<{PRIME}xf32>) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                          iterator_types = ["reduction"]}} ins(%x : tensor<{PRIME}xf32>) outs(%init : tensor<f32>) {{
  ^bb0(%in: f32, %acc: f32):
    %add = arith.addf %in, %acc : f32
    linalg.yield %add : f32
  }} -> tensor<f32>
  return %sum : tensor<f32>
}}
"""


@pytest.mark.parametrize("budget, split", [(65535, 1), (None, 0)])
def test_cut_only_past_the_devices_loop_budget(budget, split):
    """The sum is cut into partial results only for a device whose threads have a loop
    budget it would pass (lavapipe's 65535: 128 threads of 65537 iterations); a device
    with none (PoCL) keeps it in one workgroup, measured 2-4x faster there."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(SUM_OF_PRIME)
        assert split_partial_reductions(module, budget) == split
        assert len(partial_reductions(module.body.operations[0])) == split
