"""1x1 convolutions whose B (the input image, computed at run time) the matmul schedule
reads in place rather than packing its panels on every call (``matmul.packs_runtime_b``):
fewer than 16 row tiles per panel, K at least 32, rows of whole cache lines. Each case
checks the plan (packed or not, as the rule says) and the numbers against numpy in
float64, on AVX2 (x86-64-v3) and AVX-512 (x86-64-v4), at 1 and 2 threads: the unpacked
micro-kernel reads B with the image's row pitch, so a wrong stride or offset reads
other columns or channels (off by about 1 after the ReLU-cut sums), a partial last
column tile reads past a row. Inputs are standard normal, weights scaled by 1/sqrt(C);
tolerance rtol 1e-4, atol 1e-5 (float32 sums of up to 512 products in another order).
"""

import numpy as np
import pytest

from dnnf_mlir.codegen.cpu.matmul import RUNTIME_PACK_MIN_ROW_TILES
from test_peeled_tiles import conv1x1_block, run

RNG = np.random.default_rng(43)
CPUS = ["x86-64-v3", "x86-64-v4"]


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,f,h,w,packed",
    [
        # SqueezeNet's 256 -> 32 at 27x27: 4 row tiles (AVX-512), 8 (AVX2); 25 / 9 columns peeled
        (256, 32, 27, 27, {"x86-64-v3": False, "x86-64-v4": False}),
        # 384 -> 48 at 13x13: 6 / 12 row tiles, N = 169 peeled
        (384, 48, 13, 13, {"x86-64-v3": False, "x86-64-v4": False}),
        # 64 output channels: 8 row tiles on AVX-512 (read in place), 16 on AVX2 (packed)
        (96, 64, 11, 13, {"x86-64-v3": True, "x86-64-v4": False}),
        # 37 output channels (a partial row tile) over 77 columns, K = 45
        (45, 37, 7, 11, {"x86-64-v3": False, "x86-64-v4": False}),
        # 128 output channels over N = 90: AVX-512 one vector wide (``ONE_VECTOR_MAX_A_BYTES``),
        # 8 row tiles of 16, read in place; AVX2 32 row tiles of 4, packed
        (64, 128, 9, 10, {"x86-64-v3": True, "x86-64-v4": False}),
        # 128 output channels over N = 96 (whole tiles of 32): 16 row tiles on AVX-512, packed
        (64, 128, 8, 12, {"x86-64-v3": True, "x86-64-v4": True}),
        # K = 16 (SqueezeNet's expand 16 -> 64): packed, its panels are 2 KiB
        (16, 64, 15, 15, {"x86-64-v3": True, "x86-64-v4": True}),
    ],
)
def test_runtime_packing(c, f, h, w, packed, threads, cpu):
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (RNG.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, f).astype(np.float32)
    want = np.einsum("fc,chw->fhw", weights[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64))[None]
    want = np.maximum(want + bias.astype(np.float64)[None, :, None, None], 0.0)
    (got,), schedules = run(conv1x1_block(c, f, h, w, False), [x, weights, bias], cpu, threads)
    (matmul,) = [s for s in schedules if s.strategy == "matmul"]
    mr = matmul.details["register_tile"][0]
    assert ("packed_b" in matmul.details) == packed[cpu], (matmul.details, f // mr, RUNTIME_PACK_MIN_ROW_TILES)
    assert 0.2 < np.mean(want == 0) < 0.8  # the ReLU cuts a part, not all or nothing
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
