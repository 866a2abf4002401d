"""TopK as the ECG op top_k (one pass per row keeping the k best in a sorted buffer):
compiled for the host and interpreted, against onnxruntime, on the cases where a
selection goes wrong: ties (the lower index first), NaN (greater than every number, as
onnxruntime orders it), -inf and the integer extremes among the values, k = the whole
axis, an axis in the middle, unsigned and float16 elements; k large without the IR
growing with it; the errors for bad input. Values and indices must be equal exactly.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.frontend.onnx_types import OnnxImportError
from dnnf_mlir.interpreter import interpret

_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
          np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
          np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.bool_): TensorProto.BOOL}


def top_k_model(x: np.ndarray, k: int, **attrs):
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attrs)
    graph = helper.make_graph([node], "top_k", [helper.make_tensor_value_info("x", _TYPES[x.dtype], x.shape)],
                              [helper.make_tensor_value_info("values", _TYPES[x.dtype], None),
                               helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [k])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def check(x: np.ndarray, k: int, **attrs):
    model = top_k_model(x, k, **attrs)
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    compiled = InferenceSession(model, use_cache=False, threads=1).run(None, {"x": x})
    interpreted = interpret(import_onnx(model), [x])
    for got in (compiled, interpreted):
        for ours, theirs in zip(got, want):
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("largest", [1, 0])
def test_ties_nan_and_infinities(largest):
    """Rows of few distinct values (ties everywhere), NaNs and infinities placed at random."""
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 3, (6, 40)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    x[rng.random(x.shape) < 0.1] = -np.inf
    x[rng.random(x.shape) < 0.05] = np.inf
    check(x, 7, axis=1, largest=largest)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_integers_with_their_extremes(dtype):
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    x = rng.integers(0, 5, (5, 30)).astype(dtype)
    x[:, ::7] = info.min
    x[:, 3::11] = info.max
    check(x, 9, axis=-1, largest=1)
    check(x, 9, axis=-1, largest=0)


def test_middle_axis_whole_axis_and_float16():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 17, 4)).astype(np.float32)
    check(x, 17, axis=1, largest=0)
    check(x.astype(np.float16), 5, axis=-2, largest=1)


def test_large_k_compiles_small():
    """k = 500 of 1000: the selection was unrolled k times, now the IR holds one insertion loop."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 1000)).astype(np.float32)
    check(x, 500, axis=-1)
    text = str(import_onnx(top_k_model(x, 500, axis=-1)))
    assert text.count("ecg.") < 10


def test_bad_top_k_is_refused_naming_the_node():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(OnnxImportError, match=r"TopK, opset 11\): k = 5 is outside \[0, 4\]"):
        import_onnx(top_k_model(x, 5))
    with pytest.raises(OnnxImportError, match=r"TopK, opset 11\): TopK on i1 tensors is not supported"):
        import_onnx(top_k_model(np.zeros((3, 4), np.bool_), 2))


@pytest.mark.parametrize("dtype,largest", [(np.float32, 1), (np.float32, 0), (np.float16, 1), (np.int32, 0)])
def test_long_rows_through_the_block_filter(dtype, largest):
    """Rows of 16-element blocks and a tail (the pre-filter skips a block with no candidate):
    few distinct values, so that blocks after the slots fill hold ties of the k-th value
    (which must not enter) and better values late in the row; for floats NaN and
    infinities in the later blocks only, where the filter alone lets them through."""
    rng = np.random.default_rng(4)
    x = rng.integers(-4, 4, (5, 16 * 12 + 5)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        late = rng.random(x.shape) < 0.03
        late[:, :64] = False
        x[late] = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype), late.sum())
    x[:, -3] = 10 if largest else -10  # the best value, in the tail
    check(x, 6, axis=-1, largest=largest)


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("k", [33, 64, 200])
def test_heap_of_slots_with_ties_nan_and_sorted_rows(k, largest):
    """From HEAP_FROM slots on the k best are a heap, sorted at the end: rows of few distinct
    values with NaN and infinities, and rows already in the order that makes every element
    enter (ascending for the largest, descending for the smallest) or none after the first k."""
    rng = np.random.default_rng(k + largest)
    x = rng.integers(-4, 4, (5, 3 * k + 5)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    x[rng.random(x.shape) < 0.05] = -np.inf
    x[rng.random(x.shape) < 0.05] = np.inf
    x[3] = np.arange(x.shape[1])
    x[4] = -np.arange(x.shape[1])
    check(x, k, axis=1, largest=largest)
    check(x.T.copy(), k, axis=0, largest=largest)


def test_heap_of_integer_slots():
    rng = np.random.default_rng(6)
    x = rng.integers(-3, 3, (4, 90)).astype(np.int32)
    x[:, ::9] = np.iinfo(np.int32).min
    check(x, 40, axis=-1, largest=0)
    check(x, 90, axis=-1, largest=1)


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("k,n", [(1, 1009), (5, 1009), (32, 97), (13, 13)])
def test_sorted_slots_insertion_at_every_slot(k, n, largest):
    """Below HEAP_FROM an entering element goes before the first slot it beats and the rest
    shift down: rows of a prime length (blocks and a tail) of random values, of ties of
    few values (a tie never displaces the earlier index), ascending (each element enters
    at the first slot for the largest) and descending (at the last), a NaN and infinities
    late in a row; k = 1, k = n and k at the heap's threshold."""
    rng = np.random.default_rng(7 * k + n)
    x = rng.standard_normal((6, n)).astype(np.float32)
    x[1] = rng.integers(-2, 3, n)
    x[2] = np.arange(n)
    x[3] = -np.arange(n)
    x[4, n // 2] = np.nan
    x[4, n // 3] = np.inf
    x[4, -1] = -np.inf
    check(x, k, axis=-1, largest=largest)
