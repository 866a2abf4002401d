"""A GPU thread's loop iterations against lavapipe's budget of 65535 (all its loops
together: ``codegen/gpu/loop_budget.py``; the runtime's
``test_a_threads_loops_share_one_budget_on_lavapipe`` measures it).

Scatters over more updates than that ran their loop of one invocation past it and lost
the updates after it, silently (ScatterND of 100000 updates: errors up to 5.8): they now
run in parts of at most 65535 iterations, a launch each, in order; checked against
onnxruntime on both GPU targets, with repeated indices and reduction ``add`` so that the
updates' order across parts shows (float32 sums in onnxruntime's order: rtol 1e-6, the
last bits), and exactly for ``none`` with distinct indices. What no part can fix (TopK
of a row of 2,000,000 elements: 125000 iterations of its loop over the row's blocks)
is refused by name on Vulkan, and so is a sum of 8388617 elements (a prime: 128 threads of
one workgroup, 65537 iterations each); OpenCL (PoCL) has no budget and computes the TopK.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.gpu.loop_budget import loop_iterations
from dnnf_mlir.compiler import CompileError
from dnnf_mlir.tools.common import onnxruntime_session

TARGETS = ("vulkan", "opencl")
UPDATES = 100_000  # past 65535: two parts


def _iterations(body: str) -> int:
    """``loop_iterations`` of a function whose body is ``body`` (%n: a run-time bound)."""
    with ir.Context():
        module = ir.Module.parse(f"""
            func.func @f(%n: index, %flag: i1) {{
              %c0 = arith.constant 0 : index
              %c1 = arith.constant 1 : index
              %c4 = arith.constant 4 : index
              %c100 = arith.constant 100 : index
              %c300 = arith.constant 300 : index
              {body}
              return
            }}""")
        return loop_iterations(module.body.operations[0])


@pytest.mark.parametrize("body, want", [
    ("scf.for %i = %c0 to %c300 step %c1 { }", 300),
    ("scf.for %i = %c0 to %c300 step %c4 { }", 75),  # 300 / 4 iterations
    ("scf.for %i = %c0 to %c300 step %c1 { scf.for %j = %c0 to %c100 step %c1 { } }", 300 * 101),
    ("scf.for %i = %c0 to %c300 step %c1 { } scf.for %j = %c0 to %c100 step %c1 { }", 400),
    # a short loop's own iterations may be unrolled: only its inner loops count
    ("scf.for %i = %c0 to %c4 step %c1 { scf.for %j = %c0 to %c100 step %c1 { } }", 400),
    # a branch costs what its costlier side does
    ("scf.if %flag { scf.for %i = %c0 to %c300 step %c1 { } } else { scf.for %i = %c0 to %c100 step %c1 { } }", 300),
    # a launch's groups, a chain of branches a workgroup takes one of: the costliest
    ("scf.if %flag { scf.for %i = %c0 to %c300 step %c1 { } } scf.if %flag { scf.for %i = %c0 to %c100 step %c1 { } }"
     " scf.for %i = %c0 to %c100 step %c1 { }", 400),
    # a run-time trip count counts nothing, its body included (a lower bound)
    ("scf.for %i = %c0 to %n step %c1 { scf.for %j = %c0 to %c100 step %c1 { } }", 0),
    # a thread's tile, the last one shorter: the first thread's full tile
    ("%u = affine.min affine_map<()[s0] -> (s0 * -300 + 1000, 300)>()[%n] scf.for %i = %c0 to %u step %c1 { }", 300),
    ("%u = arith.minsi %n, %c300 : index scf.for %i = %c0 to %u step %c4 { }", 75),
])
def test_loop_iterations_count_a_threads_loops(body, want):
    assert _iterations(body) == want


def _scatter(op_type: str, reduction: str, rng):
    """(model, feeds): ``op_type`` of UPDATES updates into 2 * UPDATES elements, repeated
    indices (each hit about twice) unless ``reduction`` is none."""
    size = 2 * UPDATES
    positions = rng.permutation(size)[:UPDATES] if reduction == "none" else rng.integers(0, size // 2, UPDATES)
    indices = positions.reshape(-1, 1) if op_type == "ScatterND" else positions
    feeds = {"data": rng.standard_normal(size).astype(np.float32), "indices": indices.astype(np.int64),
             "updates": rng.standard_normal(UPDATES).astype(np.float32)}
    attrs = {"reduction": reduction} | ({"axis": 0} if op_type == "ScatterElements" else {})
    graph = helper.make_graph(
        [helper.make_node(op_type, list(feeds), ["y"], **attrs)], "scatter",
        [helper.make_tensor_value_info(n, TensorProto.INT64 if n == "indices" else TensorProto.FLOAT, v.shape)
         for n, v in feeds.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), feeds


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op_type, reduction", [("ScatterND", "none"), ("ScatterND", "add"),
                                                ("ScatterElements", "none"), ("ScatterElements", "add")])
def test_scatter_past_the_budget_matches_onnxruntime(op_type, reduction, target, tmp_path):
    model, feeds = _scatter(op_type, reduction, np.random.default_rng(7))
    path = tmp_path / "scatter.onnx"
    onnx.save(model, path)
    options = {"device": "lavapipe"} if target == "vulkan" else {}
    (got,) = InferenceSession(path, target=target, use_cache=False, **options).run(None, feeds)
    (want,) = onnxruntime_session(path).run(None, feeds)
    if reduction == "none":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def _top_k_of_a_long_row(tmp_path, n: int):
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["values", "indices"])], "top_k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
        [helper.make_tensor("k", TensorProto.INT64, [1], [3])])
    path = tmp_path / "top_k.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    x = np.random.default_rng(11).standard_normal((1, n)).astype(np.float32)
    x[0, -1] = 100.0  # the largest last: a loop cut short misses it
    return path, {"x": x}


def test_a_long_top_k_row_runs_in_chunks_on_vulkan(tmp_path):
    """TopK's row loop carries the k best: it cannot run in parts. Before, lavapipe
    returned the best of the row's first 1048560 elements, silently; then it was
    refused; now the row's chunks run a thread each (``transforms/split_top_k.py``)."""
    path, feeds = _top_k_of_a_long_row(tmp_path, 2_000_000)
    got = InferenceSession(path, target="vulkan", device="lavapipe", use_cache=False).run(None, feeds)
    want = onnxruntime_session(path).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_opencl_has_no_loop_budget(tmp_path):
    path, feeds = _top_k_of_a_long_row(tmp_path, 2_000_000)
    got = InferenceSession(path, target="opencl", use_cache=False).run(None, feeds)
    want = onnxruntime_session(path).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
