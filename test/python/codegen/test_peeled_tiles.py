"""Matmuls whose M or N is not a multiple of the register tile (codegen/cpu/matmul.py):
the partial last tile of each such dim is peeled off, so the bias, activation and
residual add stay fused into every tile and no operand is padded (DeepLab's 1x1
convolution over 45 x 45 = 2025 columns, padded to 2048, took a second pass for its
epilogue). A 1x1 convolution is a matmul ``W [F, C] @ X [C, H*W]``: M = F, N = H*W.

Each case checks the plan (which dims were peeled, the epilogue fused, nothing padded)
and the numbers against numpy in float64, on AVX2 (x86-64-v3) and AVX-512
(x86-64-v4), at 1 and 2 threads (at 2 the threads split a dim with whole tiles only;
where only a dim with a partial tile could be split, or the partial columns are more
than a vector but not whole vectors behind few whole tiles, the op is padded as before,
its epilogue separate; SqueezeNet's 55x55 and 27x27 are peeled). Inputs are standard normal, weights scaled by 1/sqrt(C) so that
about half the outputs are negative and the ReLU cuts them; a wrong element (a tile
written twice, a column of the partial tile left unwritten or given the wrong bias)
is off by about 1. Tolerance: rtol 1e-4, atol 1e-5 (float32 sums of up to 64 products
in another order).
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.codegen.cpu.matmul import RAGGED_PEEL_MIN_TILES
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(29)
CPUS = ["x86-64-v3", "x86-64-v4"]


def conv1x1_block(c: int, f: int, h: int, w: int, residual: bool) -> str:
    """An ECG 1x1 convolution (+ bias) [+ residual add] + relu."""
    x, wt, out = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{f}x{c}x1x1xf32>", f"tensor<1x{f}x{h}x{w}xf32>"
    args = f"%x: {x}, %w: {wt}, %b: tensor<{f}xf32>" + (f", %r: {out}" if residual else "")
    add = f'%a = "ecg.add"(%y, %r) : ({out}, {out}) -> {out}' if residual else ""
    return f"""
func.func @main({args}) -> {out} {{
  %y = "ecg.conv"(%x, %w, %b) {{auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64,
      kernel_shape = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1, 1>,
      pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}} : ({x}, {wt}, tensor<{f}xf32>) -> {out}
  {add}
  %z = "ecg.relu"({"%a" if residual else "%y"}) : ({out}) -> {out}
  return %z : {out}
}}"""


def conv1x1_case(rng, c: int, f: int, h: int, w: int, residual: bool):
    """(inputs, want) of ``conv1x1_block``: a standard normal input (and residual),
    weights scaled by 1/sqrt(C), a bias in [-0.5, 0.5]; the result in float64."""
    x = rng.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (rng.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, f).astype(np.float32)
    inputs = [x, weights, bias]
    want = np.einsum("fc,chw->fhw", weights[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64))[None]
    want = want + bias.astype(np.float64)[None, :, None, None]
    if residual:
        inputs.append(rng.standard_normal((1, f, h, w)).astype(np.float32))
        want = want + inputs[-1].astype(np.float64)
    return inputs, np.maximum(want, 0.0)


def run(text: str, inputs, cpu: str, threads: int):
    """(compiled results, schedules) of an ECG module lowered for ``cpu``."""
    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        report = lower_to_llvm(module, get_target("host", cpu), threads=threads)
        got = jit(module, threads=threads)["main"](*inputs)
    return got, report.schedules


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,f,h,w,residual,fused",
    [
        (16, 64, 45, 45, False, True),  # DeepLab's: N = 2025, the last 9 (AVX-512) or 1 (AVX2) columns peeled
        (13, 37, 7, 11, False, True),  # prime M and N: both peeled, a partial row tile in each column tile
        (13, 37, 7, 11, True, True),  # and a residual add, read by the partial tiles too
        (24, 1, 17, 19, False, True),  # one row (F = 1): M is one tile, N = 323 peeled
        (40, 67, 1, 1, False, False),  # one column (its epilogue stays apart): M = 67 peeled
        (64, 96, 4, 5, True, True),  # N = 20: a whole vector and a partial tile of 4 (AVX-512)
        (64, 29, 12, 12, False, True),  # M = 29 (not a multiple of 8 or 7), N = 144 whole
        (16, 64, 7, 7, True, True),  # N = 49: one vector wide, 1 column left (AVX-512 and AVX2): peeled
        (512, 2048, 7, 7, False, True),  # the same with A of 4 MiB (AVX-512): 17 columns left, padded
        (64, 16, 55, 55, False, True),  # SqueezeNet's squeeze: N = 3025, 17 left (AVX-512) behind 94 tiles: peeled
        (32, 128, 27, 27, True, True),  # N = 729: 25 left (AVX-512) behind 22 tiles, 9 (AVX2) behind 45: peeled
        (16, 24, 15, 31, False, True),  # N = 465: 17 left (AVX-512) behind 14 tiles: padded
    ],
)
def test_peeled_matmul(c, f, h, w, residual, fused, threads, cpu):
    text = conv1x1_block(c, f, h, w, residual)
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (RNG.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, f).astype(np.float32)
    inputs = [x, weights, bias]
    want = np.einsum("fc,chw->fhw", weights[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64))[None]
    want += bias.astype(np.float64)[None, :, None, None]
    if residual:
        inputs.append(RNG.standard_normal((1, f, h, w)).astype(np.float32))
        want += inputs[-1]
    want = np.maximum(want, 0.0)
    (got,), schedules = run(text, inputs, cpu, threads)
    (matmul,) = [s for s in schedules if s.strategy == "matmul"]
    if fused and not matmul.details["padded"]:
        assert "epilogue" in matmul.details, matmul.details
        assert [s for s in schedules if s.strategy != "matmul"] == [], [(s.op, s.details) for s in schedules]
    if threads == 1:
        # One thread: every dim with a partial tile is peeled, none padded, unless the
        # partial columns are more than a vector but not whole vectors behind few whole
        # tiles: then padded.
        mr, nr = matmul.details["register_tile"]
        lanes, rest = get_target("host", cpu).lanes(32), h * w % nr
        ragged = rest > lanes and rest % lanes != 0 and h * w // nr < RAGGED_PEEL_MIN_TILES
        partial = "".join(d for d, size, tile in (("m", f, mr), ("n", h * w, nr)) if size % tile)
        assert matmul.details.get("peeled", "") == ("" if ragged else partial), matmul.details
        assert matmul.details["padded"] == (ragged and partial != ""), matmul.details
    assert 0.2 < np.mean(want == 0) < 0.8  # the ReLU cuts a part, not all or nothing
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,f,tile", [(64, 128, {"x86-64-v3": (4, 16), "x86-64-v4": (16, 16)}),
                                      (512, 2048, {"x86-64-v3": (4, 16), "x86-64-v4": (8, 32)})])
@pytest.mark.parametrize("cpu", CPUS)
def test_ragged_columns_one_vector_wide(c, f, tile, cpu, threads):
    """N = 49 as tiles of 32 columns (AVX-512) leaves 17, more than a vector and not whole
    vectors: tiles one vector wide leave one, peeled, where A (F x C) fits in L2
    (``ONE_VECTOR_MAX_A_BYTES``); A of 4 MiB keeps the tiles of 32, padded. AVX2's tiles of
    16 leave one column either way."""
    x = RNG.standard_normal((1, c, 7, 7)).astype(np.float32)
    weights = (RNG.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, f).astype(np.float32)
    want = np.einsum("fc,chw->fhw", weights[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64))[None]
    want = np.maximum(want + bias.astype(np.float64)[None, :, None, None], 0.0)
    (got,), schedules = run(conv1x1_block(c, f, 7, 7, False), [x, weights, bias], cpu, threads)
    (matmul,) = [s for s in schedules if s.strategy == "matmul"]
    assert matmul.details["register_tile"] == tile[cpu], matmul.details
    assert matmul.details["padded"] == (tile[cpu][1] == 32), matmul.details
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize(
    "c,f,h,w,rows",
    [
        # SqueezeNet's classifier: 125 tiles of 8 rows, N = 169 (5 tiles of 32 and 9
        # columns) -> 100 tiles of 10 rows. AVX2: 250 tiles of 4 rows split as they are
        # (its 9 columns past 10 tiles of 16 are ragged: padded, as on one thread).
        (512, 1000, 13, 13, {"x86-64-v4": 10, "x86-64-v3": 4}),
        # Inception v1's 5x5 reduce at 14x14 (AVX-512): 3 tiles of 8 rows, N = 196 (6 tiles
        # of 32 and 4) would split evenly along no dim even padded: it stays on one thread
        # (a small product; not taller tiles). AVX2: 6 tiles of 4 rows split.
        (480, 24, 14, 14, {"x86-64-v4": 8, "x86-64-v3": 4}),
    ],
)
def test_taller_row_tiles_split_evenly(c, f, h, w, rows, cpu):
    """On 2 threads, a matmul whose threads would split its tiles only padded to whole
    ones takes taller register tiles whose row tiles split evenly (``tiles.even_row_tile``),
    half a thread, the partial column tile still peeled and nothing padded."""
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (RNG.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, f).astype(np.float32)
    want = np.einsum("fc,chw->fhw", weights[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64))[None]
    want = np.maximum(want + bias.astype(np.float64)[None, :, None, None], 0.0)
    (got,), schedules = run(conv1x1_block(c, f, h, w, False), [x, weights, bias], cpu, 2)
    (matmul,) = [s for s in schedules if s.strategy == "matmul"]
    assert matmul.details["register_tile"][0] == rows[cpu], matmul.details
    if rows[cpu] == 8:
        assert matmul.details["threads"] == 1, matmul.details
    else:
        assert matmul.details["forall"][0] == f // 2, matmul.details
    if cpu == "x86-64-v4" and rows[cpu] > 8:
        assert not matmul.details["padded"] and matmul.details.get("peeled") == "n", matmul.details
    assert 0.2 < np.mean(want == 0) < 0.8
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
