"""1x1 convolutions with an epilogue whose weights (A) leave L2 and whose packed B panel
overflows L1 beside a tile's rows of A: the matmul schedule tiles them rows outer, B read
in place (``matmul.tiles_rows_outer``). Each case checks the plan (rows outer or not, as
the rule says: AVX-512's 8 x 32 tiles, not AVX2's 4 x 16, rows of one cache line; one
thread; at most 256 KiB of B) and the numbers against numpy in float64, on AVX2 and AVX-512, at
1 and 2 threads, with a residual: the epilogue's prefetches of the next column tile are
clamped into the output, and partial row and column tiles (1027 channels over 5 x 7
positions) are peeled in either order. Inputs are standard normal, weights scaled by
1/sqrt(C); tolerance rtol 1e-4, atol 1e-5 (float32 sums of up to 512 products in
another order).
"""

import numpy as np
import pytest

from test_peeled_tiles import conv1x1_block, conv1x1_case, run

RNG = np.random.default_rng(53)
CPUS = ["x86-64-v3", "x86-64-v4"]


@pytest.mark.parametrize("cpu,threads", [(cpu, threads) for cpu in CPUS for threads in (1, 2)])
@pytest.mark.parametrize(
    "c,f,h,w,residual,rows_outer",
    [
        (256, 1024, 14, 14, True, True),  # ResNet-50's 256 -> 1024 + residual: 1 MiB of A, 196 KiB of B
        (256, 1027, 5, 7, True, True),  # partial last row and column tiles
        (256, 1024, 14, 14, False, True),  # bias + ReLU only
        (512, 2048, 6, 6, True, True),  # AVX2's panel overflows L1 too, but its 16-column rows are one line
        (512, 1024, 14, 14, True, False),  # 392 KiB of B: packed panels
        (256, 512, 14, 14, True, False),  # 512 KiB of A: it stays in L2
    ],
)
def test_rows_outer_tiles(c, f, h, w, residual, rows_outer, threads, cpu):
    inputs, want = conv1x1_case(RNG, c, f, h, w, residual)
    (got,), schedules = run(conv1x1_block(c, f, h, w, residual), inputs, cpu, threads)
    (matmul,) = [s for s in schedules if s.strategy == "matmul"]
    expected = rows_outer and cpu == "x86-64-v4" and matmul.details.get("forall") is None
    assert matmul.details.get("rows_outer", False) == expected, matmul.details
    assert not (expected and "packed_b" in matmul.details), matmul.details  # B read in place
    assert 0.2 < np.mean(want == 0) < 0.8  # the ReLU cuts a part, not all or nothing
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
