"""Row groups (codegen/cpu/row_fusion.py): a softmax or a layer normalization with its
neighbours scheduled as one loop over rows. Each case checks which plan it gets (the
group, or the per-op schedules when it cannot be one) and the numbers against numpy,
on 1 and 2 threads.

Inputs are standard normal: a softmax over rows of 7 to 5000 such values stays far
from one-hot (its largest value is well below 1), so a wrong max, sum or broadcast
shows. Tolerance: rtol 1e-5 with atol 1e-6, float32 rounding of sums over rows of
up to 5000 elements in another order (the horizontal reductions are reassociated).
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.codegen.cpu.row_chunks import chunk_width
from dnnf_mlir.codegen.cpu.target import host_target
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(11)
RTOL, ATOL = 1e-5, 1e-6


def compile_ecg(text: str, threads: int):
    """(JIT function @main, its schedules) of an ECG module, lowered as dnnf-compile does."""
    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        report = lower_to_llvm(module, "host", threads=threads)
        return jit(module, threads=threads)["main"], report.schedules


def tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, gamma, beta, axis, epsilon):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def masked_softmax_text(shape, axis, also_return_sum=False):
    t = tensor(shape)
    results = f"%1, %0 : {t}, {t}" if also_return_sum else f"%1 : {t}"
    types = f"{t}, {t}" if also_return_sum else t
    return f"""
func.func @main(%x: {t}, %m: {tensor(shape[-1:])}) -> ({types}) {{
  %0 = "ecg.add"(%x, %m) : ({t}, {tensor(shape[-1:])}) -> {t}
  %1 = "ecg.softmax"(%0) {{axis = {axis} : i64}} : ({t}) -> {t}
  return {results}
}}"""


def layer_norm_text(shape, axis):
    t, p = tensor(shape), tensor(shape[axis:])
    return f"""
func.func @main(%x: {t}, %r: {t}, %g: {p}, %b: {p}) -> {t} {{
  %0 = "ecg.add"(%x, %r) : ({t}, {t}) -> {t}
  %1 = "ecg.layer_normalization"(%0, %g, %b) {{axis = {axis} : i64, epsilon = 1.0E-5 : f64,
      operandSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : i64}} : ({t}, {p}, {p}) -> {t}
  return %1 : {t}
}}"""


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def strategies(schedules) -> list:
    return [s.strategy for s in schedules if not s.strategy.startswith("in ")]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "shape,axis,grouped",
    [
        ((12, 128, 128), -1, True),  # attention scores
        ((2, 3, 5, 7), -1, True),  # rows shorter than a vector
        ((5, 64, 128), -1, True),  # 5 rows over 2 threads: chunks of 3 and 2
        ((3, 1000), -1, True),  # a classifier's logits
        ((2, 5000), -1, False),  # rows longer than a vector tile: per-op schedules
        ((4, 6, 8), 1, False),  # not the trailing dim: per-op schedules
    ],
)
def test_masked_softmax(shape, axis, grouped, threads):
    main, schedules = compile_ecg(masked_softmax_text(shape, axis), threads)
    assert ("row-fused" in strategies(schedules)) == grouped, strategies(schedules)
    if grouped and threads == 2 and np.prod(shape) >= 1 << 15:  # split among the threads
        assert any("forall" in s.details for s in schedules if s.strategy == "row-fused")
    x, m = rand(*shape), rand(shape[-1])
    (got,) = main(x, m)
    want = softmax(x + m, axis)
    assert want.max() < 0.99  # not one-hot
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    "shape,threads,rows_per_step",
    [
        ((258, 128), 1, 2),  # rows of 128 (16 AVX2 vectors at most): two per step
        ((258, 128), 2, 1),  # a chunk of 129 rows per thread: one per step
        ((256, 128), 2, 2),  # chunks of 128 rows
        ((7, 128), 1, 1),  # an odd number of rows
    ],
)
def test_short_rows_two_per_step(shape, threads, rows_per_step):
    main, schedules = compile_ecg(masked_softmax_text(shape, -1), threads)
    group = next(s for s in schedules if s.strategy == "row-fused")
    assert group.details["rows_per_step"] == rows_per_step
    x, m = rand(*shape), rand(shape[-1])
    (got,) = main(x, m)
    want = softmax(x + m, -1)
    assert want.max() < 0.99  # not one-hot
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,axis", [((1, 128, 768), -1), ((4, 33), -1), ((2, 6, 8, 5), -2)])
def test_residual_layer_norm(shape, axis, threads):
    main, schedules = compile_ecg(layer_norm_text(shape, axis), threads)
    groups = [s for s in schedules if s.strategy == "row-fused"]
    assert len(groups) == 1 and groups[0].details["row"] == list(shape[axis:])
    x, r, g, b = rand(*shape), rand(*shape), rand(*shape[axis:]), rand(*shape[axis:])
    (got,) = main(x, r, g, b)
    np.testing.assert_allclose(got, layer_norm(x + r, g, b, axis, 1e-5), rtol=1e-4, atol=1e-5)


def softmax_text(shape):
    t = tensor(shape)
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %0 = "ecg.softmax"(%x) {{axis = -1 : i64}} : ({t}) -> {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("row", [7, 13, 100, 768, 1000, 4096])
def test_long_rows_in_chunks(row, threads):
    """Rows longer than the register file holds are computed in chunk loops
    (row_chunks.py): at 768, 1000 (chunks of 40 or 20: the widths dividing it), 4096
    on AVX-512 and AVX2; 100 and shorter whole. 37 rows: an uneven split in two."""
    width = chunk_width(row, host_target().lanes(32))
    shape = (37, row)
    main, schedules = compile_ecg(layer_norm_text(shape, -1), threads)
    group = next(s for s in schedules if s.strategy == "row-fused")
    assert group.details.get("chunk") == width and (width is None) == (row <= 100)
    x, r, g, b = rand(*shape), rand(*shape), rand(row), rand(row)
    (got,) = main(x, r, g, b)
    np.testing.assert_allclose(got, layer_norm(x + r, g, b, -1, 1e-5), rtol=1e-4, atol=1e-5)
    main, schedules = compile_ecg(softmax_text(shape), threads)
    group = next(s for s in schedules if s.strategy == "row-fused")
    assert group.details.get("chunk") == width
    (got,) = main(x)
    want = softmax(x, -1)
    assert want.max() < 0.99  # not one-hot
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("row", [100, 1000])
def test_softmax_rows_with_nan_and_infinity(row):
    """The row's max only shifts it (a maxnum, NaN ignored): a NaN or +inf still makes
    its whole row NaN, as numpy and onnxruntime give, a -inf a zero; other rows stay
    exact. Whole rows (100) and chunked ones (1000)."""
    x = rand(4, row)
    x[0, 3], x[1, row - 1], x[2, 5] = np.nan, np.inf, -np.inf
    main, _ = compile_ecg(softmax_text(x.shape), 1)
    (got,) = main(x)
    with np.errstate(invalid="ignore"):
        want = softmax(x, -1)
    assert np.isnan(want[:2]).all() and want[2, 5] == 0
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[2:], want[2:], rtol=RTOL, atol=ATOL)


def test_value_used_outside_stays_out():
    """The masked sum is also a result: computed once, outside the group, which reads it."""
    shape = (8, 64)
    main, schedules = compile_ecg(masked_softmax_text(shape, -1, also_return_sum=True), 1)
    group = next(s for s in schedules if s.strategy == "row-fused")
    assert group.details["fused"] == 5  # max, exp, sum and the two fills; not the add
    x, m = rand(*shape), rand(shape[-1])
    probabilities, total = main(x, m)
    np.testing.assert_allclose(total, x + m, rtol=0, atol=0)
    np.testing.assert_allclose(probabilities, softmax(x + m, -1), rtol=RTOL, atol=ATOL)
