"""Which convolutions ``dnnf-winograd`` rewrites (``mode=auto``): a cost model of the CPU
kernels, calibrated by measurement (the numbers below).

Winograd F(4x4, 3x3) does 2.25 multiply-adds per output and input channel where the
direct convolution does 9, but adds the input and output transforms (memory-bound
passes over 2.25 times the input and output) and a batch matmul whose rows are
the 36 points' tiles. It pays where the channels make the matmul the bulk of the work
and the image has enough tiles to fill the micro-kernel's columns.
"""

from __future__ import annotations

MIN_CHANNELS = 32  # input and output channels (below, the transforms dominate)
MIN_TILES = 16  # 4x4 output tiles per image (below, the matmul's columns are mostly padding)


def prefers_winograd(n: int, c: int, k: int, oh: int, ow: int) -> bool:
    """Whether F(4x4, 3x3) is expected faster than the direct convolution for an
    ``[n, c] -> [n, k, oh, ow]`` 3x3 stride-1 convolution on the CPU."""
    tiles = -(-oh // 4) * -(-ow // 4)
    return min(c, k) >= MIN_CHANNELS and tiles >= MIN_TILES


__all__ = ["prefers_winograd"]
