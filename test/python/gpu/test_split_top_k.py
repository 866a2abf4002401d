"""ecg-split-top-k (``transforms/split_top_k.py``) as the interpreter runs it: the split
TopK against the TopK it replaced, on small budgets that force two and three levels,
padded chunks, a middle axis, integers with their extremes, ties and NaN, rows in the
order that makes every element enter; values and indices equal exactly. The lowering's
bound ``row_loop_iterations`` is checked against the loop budget's count of the lowered
row with every iteration counted (``loop_budget.loop_iterations``)."""

import numpy as np
import pytest

from dnnf_mlir._mlir import ir
from dnnf_mlir.conversion import convert_ecg_to_linalg
from dnnf_mlir.conversion.ecg_to_linalg.top_k import row_loop_iterations
from dnnf_mlir.codegen.gpu.loop_budget import loop_iterations
from dnnf_mlir.context import make_context
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.ir_walk import walk_ops
from dnnf_mlir.transforms.split_top_k import chunk_length, split_top_ks

_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.float16): "f16"}


def _module(shape, dtype, axis: int, k: int, largest: int) -> str:
    out = list(shape)
    out[axis] = k
    x = f"tensor<{'x'.join(map(str, shape))}x{_TYPES[np.dtype(dtype)]}>"
    v = f"tensor<{'x'.join(map(str, out))}x{_TYPES[np.dtype(dtype)]}>"
    i = f"tensor<{'x'.join(map(str, out))}xi64>"
    return f"""
      func.func @main(%x: {x}) -> ({v}, {i}) {{
        %v, %i = "ecg.top_k"(%x) {{axis = {axis} : i64, k = {k} : i64, largest = {largest} : i64}} : ({x}) -> ({v}, {i})
        return %v, %i : {v}, {i}
      }}"""


def _rows(shape, dtype, axis: int, largest: int, seed: int) -> np.ndarray:
    """Few distinct values (ties), NaN and infinities (floats) or the extremes (integers); the
    first row along the other axes in the order that makes every element enter."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 6, shape).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        x[rng.random(shape) < 0.02] = np.nan
        x[rng.random(shape) < 0.02] = -np.inf if largest else np.inf
    else:
        x[rng.random(shape) < 0.05] = np.iinfo(dtype).min if largest else np.iinfo(dtype).max
    ramp = np.arange(shape[axis]) * (1 if largest else -1)
    first = [0] * len(shape)
    first[axis] = slice(None)
    x[tuple(first)] = ramp.astype(dtype)
    return x


@pytest.mark.parametrize("shape, dtype, axis, k, largest, budget, levels", [
    ((3, 1001, 2), np.float32, 1, 5, 0, 2000, 2),
    ((2, 1001), np.float32, 1, 5, 1, 2000, 2),
    ((2001,), np.int32, 0, 40, 1, 2000, 3),
    ((2001,), np.int32, 0, 40, 0, 2000, 3),
    ((2, 5000), np.float32, 1, 1, 1, 40, 3),
    ((700, 2), np.float32, 0, 64, 0, 3000, 2),
    ((4, 640), np.float16, 1, 33, 1, 4000, 2),
])
def test_split_top_k_selects_what_the_top_k_does(shape, dtype, axis, k, largest, budget, levels):
    with make_context():
        module = ir.Module.parse(_module(shape, dtype, axis, k, largest))
        x = _rows(shape, dtype, axis, largest, seed=k + len(shape))
        (want_values, want_indices) = interpret(module, [x])
        assert split_top_ks(module.operation, budget) == 1
        assert len(walk_ops(module.operation, {"ecg.top_k"})) == levels
        got_values, got_indices = interpret(module, [x])
    np.testing.assert_array_equal(got_values, want_values)
    np.testing.assert_array_equal(got_indices, want_indices)


@pytest.mark.parametrize("n, k", [(1000, 5), (4096, 1024), (300, 33), (17, 16), (40, 40)])
def test_row_loop_iterations_is_the_lowered_rows_worst_case(n, k):
    """The bound is every iteration of the lowered row when every element enters: the loop
    budget's count of one row, every loop's iterations counted, less the loop over the row."""
    with make_context():
        module = ir.Module.parse(_module((n,), np.float32, 0, k, 1))
        convert_ecg_to_linalg(module)
        function = walk_ops(module.operation, {"func.func"})[0]
        assert loop_iterations(function, unrolled_trips=0) == row_loop_iterations(n, k) + 1


def test_chunks_fit_the_budget_and_halve_the_candidates():
    for k in (1, 5, 200, 1024):
        chunk = chunk_length(k, 65535)
        assert chunk >= 2 * k
        assert row_loop_iterations(chunk, k) <= 65535 < row_loop_iterations(chunk + 1, k)
