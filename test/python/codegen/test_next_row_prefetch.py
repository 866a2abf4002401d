"""1x1 convolutions whose weights (A) leave L2 in short rows: the matmul schedule marks
their reduction loops to prefetch the next row tile's rows of A
(``panel_prefetch.prefetches_next_row_tile``). Each case checks the plan (prefetched or
not, as the rule says: more than 768 KiB of A in rows of at most 2 KiB) and the numbers
against numpy in float64, on AVX2 (x86-64-v3, 4-row tiles) and AVX-512 (x86-64-v4,
8-row tiles), at 1 and 2 threads, with a residual where the epilogue reads one: the
prefetches sit among the reduction's reads, whose order and operands the numbers
check, and the last tiles' are clamped into A (a partial row tile of 1027 channels).
Inputs are standard normal, weights scaled by 1/sqrt(C); tolerance rtol 1e-4, atol
1e-5 (float32 sums of up to 1024 products in another order).
"""

import numpy as np
import pytest

from test_peeled_tiles import conv1x1_block, conv1x1_case, run

RNG = np.random.default_rng(47)
CPUS = ["x86-64-v3", "x86-64-v4"]


@pytest.mark.parametrize("cpu,threads", [(cpu, threads) for cpu in CPUS for threads in (1, 2)])
@pytest.mark.parametrize(
    "c,f,h,w,residual,prefetched",
    [
        (256, 1024, 14, 14, True, True),  # ResNet-50's 256 -> 1024 + residual: 1 MiB of A in rows of 1 KiB
        (256, 1027, 5, 7, True, True),  # a partial last row tile: the prefetches of the last tiles clamped
        (384, 512, 7, 7, False, False),  # rows of 1.5 KiB, but 768 KiB of A: it stays in L2
        (1024, 256, 7, 7, False, False),  # 1 MiB of A in rows of 4 KiB: the hardware follows them
    ],
)
def test_next_row_prefetch(c, f, h, w, residual, prefetched, threads, cpu):
    inputs, want = conv1x1_case(RNG, c, f, h, w, residual)
    (got,), schedules = run(conv1x1_block(c, f, h, w, residual), inputs, cpu, threads)
    (matmul,) = [s for s in schedules if s.strategy == "matmul"]
    assert matmul.details.get("prefetched_next_rows", False) == prefetched, matmul.details
    assert 0.2 < np.mean(want == 0) < 0.8  # the ReLU cuts a part, not all or nothing
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
