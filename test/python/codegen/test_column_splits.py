"""Matmuls whose row tiles cannot be shared evenly by the threads and whose one column
tile cannot be shared at all (codegen/cpu/matmul.py, ``tiles.even_column_tile``): on 2
threads they take narrower column tiles whose count divides evenly, each thread its
columns over all the rows, where they ran on one thread. DenseNet's 3x3 convolutions
128 -> 32 at 7x7 are such a product as channel panels (``panels_pass.py``): 49 rows of
windows (K = 1152) times one panel of 32 channels, 7 row tiles of 7 x 32 on AVX-512.

Each case checks the plan (the register tile, the split, the peeled rows) and the
numbers against numpy in float64 at 1 and 2 threads, on AVX2 (x86-64-v3) and AVX-512
(x86-64-v4). Inputs are standard normal: a column tile left unwritten, or computed by
both threads from the wrong columns, is off by about sqrt(K). Tolerance: rtol 1e-4,
atol 1e-4 * sqrt(K) (float32 sums of K products in another order).
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target, sample_ops
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm

RNG = np.random.default_rng(48)


def run(m: int, n: int, k: int, cpu: str, threads: int):
    """(the product of standard normal A and B as compiled, numpy's in float64, its schedule)."""
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    with dnnf_mlir.make_context():
        module = ir.Module.parse(sample_ops.matmul(m, n, k))
        report = lower_to_llvm(module, get_target("host", cpu), threads=threads)
        (got,) = jit(module, threads=threads)["main"](a, b)
    (schedule,) = [s for s in report.schedules if s.strategy == "matmul"]
    return got, a.astype(np.float64) @ b.astype(np.float64), schedule.details


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "cpu,tile,split",
    [
        # 7 row tiles of 7 x 32 -> 4 of 16 x 16 (the last peeled: one row), 2 column tiles.
        ("x86-64-v4", {1: (7, 32), 2: (16, 16)}, {1: None, 2: [0, 16, 0]}),
        # AVX2's 16 columns already split: as it was.
        ("x86-64-v3", {1: (4, 16), 2: (4, 16)}, {1: None, 2: [0, 16, 0]}),
    ],
)
def test_densenet_panel_product_splits_its_columns(threads, cpu, tile, split):
    got, want, details = run(49, 32, 1152, cpu, threads)
    assert details["register_tile"] == tile[threads], details
    assert details.get("forall") == split[threads], details
    assert "threads" not in details, details
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(1152))



def test_rows_4_kib_apart_keep_their_tile():
    """K = 1024: the rows of A are 4 KiB apart, in one set of the first-level cache; the
    16-row tiles of 16 columns would evict their own rows (``tiles.ALIASED_ROW_BYTES``;
    2.1 times the time as channel panels), so the product stays on one thread as before."""
    got, want, details = run(49, 32, 1024, "x86-64-v4", 2)
    assert details["register_tile"] == (7, 32) and details["threads"] == 1, details
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(1024))
