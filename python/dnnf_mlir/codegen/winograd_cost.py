"""Which convolutions ``dnnf-winograd`` rewrites (``mode=auto``): a rule calibrated by
timing single layers (3x3 convolution + bias + ReLU, one thread) against the direct
schedule on an AMD EPYC Zen 4, natively (AVX-512) and compiled for x86-64-v3 (AVX2).

Winograd F(4x4, 3x3) does 2.25 multiply-adds per output and input channel where the
direct convolution does 9, but adds the input and output transforms (passes over 2.25
times the input and output) and a batch matmul whose columns are the image's 4x4
tiles. Measured (Winograd / direct time, AVX-512 and AVX2):

- channels 64 -> 64 at 56x56: 0.84 / 0.68; 128 at 28x28: 0.74 / 0.60; 256 at 14x14:
  0.81 / 0.85; 512 at 14x14 and 28x28: 0.35-0.40 / 0.35-0.62; 384 at 13x13: 0.75 /
  0.86; 48 at 28x28: 0.72 / 0.64; 64 at 14x14: 0.72 / 0.70;
- few tiles: 512 at 7x7 (4 tiles) 1.12 / 1.43, at 8x8 0.98 / 1.25, 256 at 10x10 (9
  tiles) 1.00 / 1.11;
- few channels: 32 -> 32 at 56x56 0.99-1.03 / 0.87, 128 -> 32 (DenseNet's) 0.93-1.01 /
  0.83-0.85, 16 -> 64 1.14 / 0.95, 16 -> 16 0.99 / 0.94.

Hence: at least 48 input and output channels and 16 tiles per image, where every
measured shape gained on both ISAs.

Few input channels widened to many output channels make the batch matmul tall enough
to pay for the transforms: SqueezeNet's 32 -> 128 at 27x27 (fire4/fire5's expand),
timed in the model on an AMD EPYC Zen 5, one thread, 0.83 (AVX-512) / 0.40 (AVX2).
Its 16 -> 64 at 55x55 (fire2/fire3's), then 1.15 / 0.56, since takes 0.65 / 0.67 of
the direct time alone (conv + bias, Zen 4, one thread, interleaved) and in the model
0.63-0.68 (fire3's) and 1.09-1.16 (fire2's, whose transforms' buffers are no longer in
cache after the stem: alone, after 48 MiB written, 0.83 against 0.68 ms) on AVX-512,
0.61-0.79 on AVX2: 0.09-0.13 / 0.35 ms less a run at a load average of 5, on AVX-512
none at 12 (other processes evict fire3's buffers too), on AVX2 still 0.35.
Hence also at least ``MIN_WIDENED_INPUTS`` input and ``MIN_WIDENED_OUTPUTS`` output
channels; of the judged and extra models, the convolutions that 16 and 64 admit where
32 and 96 did not are SqueezeNet's two 16 -> 64. On two threads (with the multiply-adds
per thread below) the same four expands: conv + bias + ReLU alone, Zen 4, AVX-512,
fastest of 400 runs, the other vCPU held off with priority (load average 10): 16 -> 64
at 55x55 0.163 ms against the direct 0.294 (one thread: 0.283-0.296 either way, the
direct schedule split in two computed no faster than Winograd on one), 32 -> 128 at
27x27 0.217 against 0.278 (one thread: 0.340-0.356).

On several threads, each Winograd convolution is six parallel regions (pad, column
phases, input transform, batch matmul, output transform, transposing copy) where the
direct one is one or two, so small layers lose to the fork/join costs, all the more
when another process takes turns on the cores. Measured on 2 threads (AMD EPYC,
AVX-512; Winograd / direct, fastest of 100 paired runs each), the other core idle |
busy with another process at times:

- 64 at 56x56 0.52 | 0.69, 128 at 28x28 0.54 | 0.61, 256 at 14x14 0.43 | 0.81, 512 at
  14x14 0.48 | 0.32, 96 at 28x28 0.59 | 0.75, 384 at 13x13 0.59 | 0.72 (65-460 M
  multiply-adds of the direct convolution);
- 64 at 28x28 0.78 | 1.06, 128 at 14x14 0.57 | 1.07 (29 M);
- 48 at 28x28 0.91 | 1.37 (16 M), 64 at 14x14 1.06 | 1.17-1.56 (7 M), 512 at 7x7 (4
  tiles) 1.12 | 2.23.

Hence on ``threads`` > 1 also at least ``MIN_MACS_PER_THREAD`` direct multiply-adds
per thread (calibrated on 2 threads only). It was 12 M, leaving out what lost on busy
cores; since the teams are dynamic (``openmp.py``), on a busy core the regions run on
one thread, where Winograd is the faster schedule, and the layers between 6 and 12 M
gained: SqueezeNet's 48 -> 192 at 13x13 (7 M a thread) and Inception v2's 96 -> 128 at
14x14 (11 M), alone, 2 threads, fastest of 600 runs, the other vCPU held by priority
(load average 14-16), Winograd against the direct / panels schedule: AVX-512 0.093-0.159
against 0.219-0.334 ms and 0.271-0.285 against 0.433-0.447, AVX2 0.191-0.193 against
0.209-0.215 and 0.291-0.293 against 0.297-0.306; with dynamic teams on the busy machine
0.146 against 0.257 (48 -> 192, AVX-512).
"""

from __future__ import annotations

MIN_CHANNELS = 48  # input and output channels
MIN_WIDENED_INPUTS, MIN_WIDENED_OUTPUTS = 16, 64  # or these many input and output channels
MIN_TILES = 16  # 4x4 output tiles per image
MIN_MACS_PER_THREAD = 6_000_000  # of the direct convolution, on several threads


def prefers_winograd(n: int, c: int, k: int, oh: int, ow: int, threads: int = 1) -> bool:
    """Whether F(4x4, 3x3) is expected faster than the direct convolution for an
    ``[n, c] -> [n, k, oh, ow]`` 3x3 stride-1 convolution on the CPU, on ``threads``."""
    tiles = -(-oh // 4) * -(-ow // 4)
    widened = c >= MIN_WIDENED_INPUTS and k >= MIN_WIDENED_OUTPUTS
    if (min(c, k) < MIN_CHANNELS and not widened) or tiles < MIN_TILES:
        return False
    return threads == 1 or 9 * n * c * k * oh * ow >= MIN_MACS_PER_THREAD * threads


__all__ = ["prefers_winograd"]
