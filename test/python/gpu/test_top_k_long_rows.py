"""TopK over long rows and with large k on the GPU targets (Vulkan on lavapipe, OpenCL on
PoCL), against onnxruntime, values and indices equal exactly.

lavapipe ends a thread's loops after 65535 iterations, silently, and a row's TopK costs
what its data make it (every element that enters the k best costs an insertion): k = 200
over 100,000 values returned a wrong selection. On Vulkan the rows past that budget
are now split (``transforms/split_top_k.py``; PoCL has no budget: a row per thread),
and from 33 slots on the k best are a heap (``conversion/ecg_to_linalg/top_k.py``). Each case holds a row in the order that makes
every element enter (ascending for the largest, descending for the smallest: the worst
case the budget is checked against) and a row of few distinct values (ties everywhere,
the lower index first) with NaN (greater than every number, as onnxruntime orders it)
and infinities; the axis last or not. A k that no chunk fits is refused by name.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.compiler import CompileError
from dnnf_mlir.tools.common import onnxruntime_session

TARGETS = ("vulkan", "opencl")

CASES = [  # (row length, k, axis last, largest)
    (7, 1, True, 1), (7, 5, False, 0),
    (1000, 5, True, 0), (1000, 200, False, 1), (1000, 1, False, 1),
    (100_000, 200, True, 1), (100_000, 1024, False, 0), (100_000, 1, True, 0), (100_000, 5, False, 1),
    (2_000_000, 1024, False, 1), (2_000_000, 200, True, 0), (2_000_000, 5, True, 1), (2_000_000, 1, False, 0),
]


def _model(shape, k: int, axis: int, largest: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest)], "top_k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
        [helper.make_tensor("k", TensorProto.INT64, [1], [k])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _rows(n: int, k: int, largest: int, seed: int) -> np.ndarray:
    """Two rows of ``n``: every element entering, then ties with NaN and infinities (about
    k / 4 of each at random places: the k best hold NaN or infinities, then ties)."""
    rng = np.random.default_rng(seed)
    ramp = np.arange(n, dtype=np.float32) * (1 if largest else -1)
    ties = (rng.integers(-12, 12, n) / 8).astype(np.float32)
    for special in (np.nan, np.inf, -np.inf):
        ties[rng.integers(0, n, max(1, k // 4))] = special
    return np.stack([ramp, ties])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n, k, last, largest", CASES)
def test_top_k_matches_onnxruntime(n, k, last, largest, target, tmp_path):
    rows = _rows(n, k, largest, seed=n + k)
    x = rows if last else rows.T.copy()
    model = _model(list(x.shape), k, 1 if last else 0, largest)
    path = tmp_path / "top_k.onnx"
    onnx.save(model, path)
    options = {"device": "lavapipe"} if target == "vulkan" else {}
    got = InferenceSession(path, target=target, use_cache=False, **options).run(None, {"x": x})
    want = onnxruntime_session(path).run(None, {"x": x})
    assert got[1].dtype == np.int64
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("n, k, largest", [(100_000, 200, 1), (2_000_000, 200, 0), (1000, 5, 0)])
def test_the_rows_hold_ties_and_nan_among_the_selected(n, k, largest):
    """The second row's k best hold equal numbers (their order checks the indices'), and
    NaN for the largest (it ranks above every number)."""
    ties = _rows(n, k, largest, seed=n + k)[1]
    ranked = np.sort(np.nan_to_num(ties, nan=np.finfo(np.float32).max))  # NaN: greatest, kept apart from +inf
    best = ranked[::-1][:k] if largest else ranked[:k]
    numbers = best[np.isfinite(best) & (best != np.finfo(np.float32).max)]
    assert (np.diff(numbers) == 0).sum() >= k // 4
    assert not largest or (best == np.finfo(np.float32).max).any()


def test_a_k_no_chunk_fits_is_refused_by_name(tmp_path):
    """k = 2048: a chunk of 2k elements runs past lavapipe's 65535 iterations a thread."""
    path = tmp_path / "top_k.onnx"
    onnx.save(_model([1, 100_000], 2048, 1, 1), path)
    with pytest.raises(CompileError, match=r"TopK with k = 2048 does not fit a GPU thread's loop budget: the TopK "
                                           r"of a chunk of 4096 elements \(2k\) runs up to \d+ loop iterations"):
        InferenceSession(path, target="vulkan", device="lavapipe", use_cache=False)
