"""Pooling and depthwise convolutions: ``windows_to_taps`` makes them element-wise ops
over the window's taps (or a reduction for global pooling), vectorized by the generic
schedule. Checked against numpy: max pooling exactly, sums to 1e-5 (the same terms as
numpy's, added in another order)."""

import numpy as np
import pytest

from compile_helpers import compile_text
from dnnf_mlir.codegen import get_target

RNG = np.random.default_rng(11)

POOL = """
func.func @main(%x: tensor<1x{c}x{h}x{w}xf32>) -> tensor<1x{c}x{oh}x{ow}xf32> {{
  %init = arith.constant {init} : f32
  %e = tensor.empty() : tensor<1x{c}x{oh}x{ow}xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<1x{c}x{oh}x{ow}xf32>) -> tensor<1x{c}x{oh}x{ow}xf32>
  %window = tensor.empty() : tensor<{k}x{k}xf32>
  %y = linalg.pooling_nchw_{kind} {{dilations = dense<1> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}
       ins(%x, %window : tensor<1x{c}x{h}x{w}xf32>, tensor<{k}x{k}xf32>)
       outs(%f : tensor<1x{c}x{oh}x{ow}xf32>) -> tensor<1x{c}x{oh}x{ow}xf32>
  return %y : tensor<1x{c}x{oh}x{ow}xf32>
}}
"""

DEPTHWISE = """
func.func @main(%x: tensor<1x{c}x{h}x{w}xf32>, %k: tensor<{c}x3x3xf32>, %b: tensor<{c}xf32>) -> tensor<1x{c}x{oh}x{ow}xf32> {{
  %e = tensor.empty() : tensor<1x{c}x{oh}x{ow}xf32>
  %bias = linalg.broadcast ins(%b : tensor<{c}xf32>) outs(%e : tensor<1x{c}x{oh}x{ow}xf32>) dimensions = [0, 2, 3]
  %y = linalg.depthwise_conv_2d_nchw_chw {{dilations = dense<{d}> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}
       ins(%x, %k : tensor<1x{c}x{h}x{w}xf32>, tensor<{c}x3x3xf32>)
       outs(%bias : tensor<1x{c}x{oh}x{ow}xf32>) -> tensor<1x{c}x{oh}x{ow}xf32>
  return %y : tensor<1x{c}x{oh}x{ow}xf32>
}}
"""




def windows(x, k, s, d=1):
    """[kh, kw, N, C, OH, OW]: the strided, dilated taps of every window."""
    oh = (x.shape[2] - d * (k - 1) - 1) // s + 1
    ow = (x.shape[3] - d * (k - 1) - 1) // s + 1
    return np.stack(
        [np.stack([x[:, :, i * d : i * d + s * (oh - 1) + 1 : s, j * d : j * d + s * (ow - 1) + 1 : s] for j in range(k)]) for i in range(k)]
    )


def window_kernels(report):
    """Kernels of the rewritten windows (element-wise generics / reductions on 4-d shapes)."""
    return [k for k in report.schedules if k.op == "linalg.generic" and len(k.shape) == 4]


@pytest.mark.parametrize(
    "kind,c,h,k,s,threads",
    [
        ("max", 8, 16, 3, 1, 1),  # stride 1: contiguous taps
        ("sum", 6, 15, 3, 2, 1),  # a narrow strided row
        ("max", 32, 29, 3, 2, 2),  # split among threads
        ("sum", 16, 7, 7, 1, 1),  # global pooling: a reduction
    ],
)
def test_pooling_vectorized(kind, c, h, k, s, threads):
    o = (h - k) // s + 1
    init = "0xFF800000" if kind == "max" else "0.0"
    compiled, report, _, _ = compile_text(POOL.format(kind=kind, c=c, h=h, w=h, oh=o, ow=o, k=k, s=s, init=init), threads)
    # One kernel, or two where the channel loop takes the window's rows, then its
    # columns (``separable_pools.py``: AVX2's 8 lanes for the 16- and 29-wide planes).
    strategies = [kernel.strategy for kernel in window_kernels(report)]
    assert 1 <= len(strategies) <= 2 and set(strategies) == {"vectorized"}, strategies
    x = RNG.standard_normal((1, c, h, h)).astype(np.float32)
    (y,) = compiled.main(x)
    taps = windows(x, k, s)
    if kind == "max":
        np.testing.assert_array_equal(y, taps.max(axis=(0, 1)))
    else:
        np.testing.assert_allclose(y, taps.sum(axis=(0, 1)), rtol=1e-5, atol=1e-5)


def phase_kernels(report):
    """The phase splits of strided windows: [N, C, H, S, W/S] transposes."""
    return [k for k in report.schedules if k.op == "linalg.generic" and len(k.shape) == 5]


@pytest.mark.parametrize("threads", [1, 2])
def test_wide_strided_pooling_per_channel(threads):
    """A strided 55-wide row: pooled a channel at a time (cpu/depthwise.py); read in place
    where the row is one vector of the row schedule (AVX-512), else split by phase in a
    per-channel buffer (AVX2: 55 lanes are 7 vectors)."""
    compiled, report, _, _ = compile_text(POOL.format(kind="max", c=3, h=111, w=111, oh=55, ow=55, k=3, s=2, init="0xFF800000"),
                                          threads)
    (taps,) = [k for k in window_kernels(report) if k.shape == (1, 1, 55, 55)]
    assert taps.strategy == "vectorized"
    lanes = get_target("host").lanes(32)
    assert len(phase_kernels(report)) == (0 if 55 <= 4 * lanes else 1)
    x = RNG.standard_normal((1, 3, 111, 111)).astype(np.float32)
    x[0, 0, 4, 9] = x[0, 1, 110, 110] = x[0, 2, 60, 0] = np.nan  # NaN wins its windows, as numpy's max
    x[0, 2, 20:23, 30:33] = np.array([[-0.0, 0.0, -0.0]] * 3)  # zeros of either sign: equal, whichever wins
    x[0, 2, 20:23, 33:35] = -1.0
    (y,) = compiled.main(x)
    want = windows(x, 3, 2).max(axis=(0, 1))
    assert np.isnan(want).sum() == 5  # rows 4 and 60 are in two windows each
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("c,h,s,d,threads", [(24, 16, 1, 1, 1), (16, 30, 2, 1, 1), (12, 18, 1, 2, 2), (8, 57, 2, 1, 1),
                                             (5, 40, 2, 2, 1), (7, 23, 3, 1, 2), (9, 113, 2, 1, 2)])
def test_depthwise_vectorized(c, h, s, d, threads):
    o = (h - d * 2 - 1) // s + 1
    compiled, report, _, _ = compile_text(DEPTHWISE.format(c=c, h=h, w=h, oh=o, ow=o, s=s, d=d), threads)
    assert "vectorized" in [kernel.strategy for kernel in window_kernels(report)]
    # Strided rows wider than a vector are split by phase, per channel (cpu/depthwise.py);
    # narrower ones are whole-tensor windows, which split from two vectors wide.
    lanes = get_target("host").lanes(32)  # of the CPU compiled for: $DNNF_CPU or this machine's
    assert len(phase_kernels(report)) == (1 if s > 1 and o > lanes else 0)
    x = RNG.standard_normal((1, c, h, h)).astype(np.float32)
    w = RNG.standard_normal((c, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(c).astype(np.float32)
    (y,) = compiled.main(x, w, b)
    want = np.einsum("ijncyx,cij->ncyx", windows(x, 3, s, d), w) + b[None, :, None, None]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
