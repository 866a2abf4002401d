"""Kernels that get a rewrite of their own before scheduling: matrix-vector products
with a transposed weight, grouped convolutions, math functions as arithmetic."""

import numpy as np
import pytest
from scipy.special import erf

from compile_helpers import compile_text

RNG = np.random.default_rng(7)




def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


MATVEC = """
func.func @main(%x: tensor<1x{k}xf32>, %w: tensor<{n}x{k}xf32>, %b: tensor<{n}xf32>) -> tensor<1x{n}xf32> {{
  %e = tensor.empty() : tensor<1x{n}xf32>
  %bb = linalg.broadcast ins(%b : tensor<{n}xf32>) outs(%e : tensor<1x{n}xf32>) dimensions = [0]
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
       ins(%x, %w : tensor<1x{k}xf32>, tensor<{n}x{k}xf32>) outs(%bb : tensor<1x{n}xf32>) -> tensor<1x{n}xf32>
  return %y : tensor<1x{n}xf32>
}}
"""


@pytest.mark.parametrize("n,k,threads", [(1000, 256, 1), (64, 512, 2)])
def test_matvec_transposed_weight(n, k, threads):
    compiled, report, _, _ = compile_text(MATVEC.format(n=n, k=k), threads)
    assert [kernel.strategy for kernel in report.schedules if kernel.strategy == "matvec"] == ["matvec"]
    x, w, b = rand(1, k), rand(n, k), rand(n)
    (y,) = compiled.main(x, w, b)
    np.testing.assert_allclose(y, x @ w.T + b, rtol=1e-4, atol=1e-4)


GROUPED = """
func.func @main(%x: tensor<1x{g}x{c}x{h}x{h}xf32>, %w: tensor<{g}x{f}x{c}x{k}x{k}xf32>) -> tensor<1x{g}x{f}x{o}x{o}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x{g}x{f}x{o}x{o}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x{g}x{f}x{o}x{o}xf32>) -> tensor<1x{g}x{f}x{o}x{o}xf32>
  %y = linalg.conv_2d_ngchw_gfchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}
       ins(%x, %w : tensor<1x{g}x{c}x{h}x{h}xf32>, tensor<{g}x{f}x{c}x{k}x{k}xf32>)
       outs(%init : tensor<1x{g}x{f}x{o}x{o}xf32>) -> tensor<1x{g}x{f}x{o}x{o}xf32>
  return %y : tensor<1x{g}x{f}x{o}x{o}xf32>
}}
"""


@pytest.mark.parametrize("g,c,f,h,k,s,threads,strategy", [
    (2, 24, 16, 12, 3, 1, 1, "conv2d"), (4, 6, 10, 9, 1, 2, 1, "matmul"), (2, 8, 16, 12, 3, 1, 1, "grouped"),
    (32, 4, 4, 9, 3, 2, 2, "grouped"),
])
def test_grouped_convolution(g, c, f, h, k, s, threads, strategy):
    """Few channels per group: per group, one register-tiled generic over the taps
    (``grouped.py``; the blocks of groups shared by the threads); more: a loop over the
    groups of one register-tiled convolution each; 1x1 ones: one batched matmul."""
    o = (h - k) // s + 1
    compiled, report, _, _ = compile_text(GROUPED.format(g=g, c=c, f=f, h=h, k=k, s=s, o=o), threads)
    assert {kernel.strategy for kernel in report.schedules} >= {strategy}
    x, w = rand(1, g, c, h, h), rand(g, f, c, k, k)
    (y,) = compiled.main(x, w)
    want = np.zeros((1, g, f, o, o), np.float32)
    for i in range(k):
        for j in range(k):
            patch = x[:, :, :, i : i + s * (o - 1) + 1 : s, j : j + s * (o - 1) + 1 : s]
            want += np.einsum("ngchw,gfc->ngfhw", patch, w[:, :, :, i, j])
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


MATH = """
func.func @main(%x: tensor<4096xf32>) -> tensor<4096xf32> {{
  %e = tensor.empty() : tensor<4096xf32>
  %y = linalg.generic {{indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>], iterator_types = ["parallel"]}}
       ins(%x : tensor<4096xf32>) outs(%e : tensor<4096xf32>) {{
  ^bb0(%in: f32, %out: f32):
    {body}
    linalg.yield %r : f32
  }} -> tensor<4096xf32>
  return %y : tensor<4096xf32>
}}
"""


@pytest.mark.parametrize(
    "body,reference",
    [
        ("%r = math.erf %in : f32", erf),
        ("%r = math.exp %in : f32", np.exp),
        ("%r = math.tanh %in : f32", np.tanh),
        ("%c = arith.constant 3.0 : f32\n    %r = math.powf %in, %c : f32", lambda v: v**3),
        # A LRN's exponent, as two square roots: NaN below 0 as powf.
        ("%c = arith.constant 0.75 : f32\n    %r = math.powf %in, %c : f32",
         lambda v: np.where(v >= 0, np.abs(v) ** 0.75, np.nan)),
    ],
)
def test_math_approximations(body, reference):
    compiled, _, _, _ = compile_text(MATH.format(body=body))
    x = np.concatenate([np.linspace(-0.2, 0.2, 1024), np.linspace(-12, 12, 3072)]).astype(np.float32)
    (y,) = compiled.main(x)
    want = reference(x.astype(np.float64))
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=2e-7)


SHARED_INPUT = """
func.func @main(%x: tensor<1x3x6x14xf32>, %w1: tensor<2x3x2x1xf32>, %w2: tensor<2x3x2x1xf32>)
    -> (tensor<1x2x5x14xf32>, tensor<1x2x5x14xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x5x14xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x5x14xf32>) -> tensor<1x2x5x14xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w1 : tensor<1x3x6x14xf32>, tensor<2x3x2x1xf32>) outs(%init : tensor<1x2x5x14xf32>) -> tensor<1x2x5x14xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w2 : tensor<1x3x6x14xf32>, tensor<2x3x2x1xf32>) outs(%init : tensor<1x2x5x14xf32>) -> tensor<1x2x5x14xf32>
  return %a, %b : tensor<1x2x5x14xf32>, tensor<1x2x5x14xf32>
}
"""


def test_convolutions_of_one_padded_input():
    """Two convolutions read one input, widened by one shared pad (14 columns computed
    16 wide; rows narrower than a vector would be matmuls): it is materialized once
    (materializing it again for the second crashed the transform interpreter)."""
    compiled, report, _, _ = compile_text(SHARED_INPUT)
    assert [kernel.strategy for kernel in report.schedules].count("conv2d") == 2
    x, w1, w2 = rand(1, 3, 6, 14), rand(2, 3, 2, 1), rand(2, 3, 2, 1)
    for y, w in zip(compiled.main(x, w1, w2), (w1, w2)):
        want = sum(np.einsum("nchw,fc->nfhw", x[:, :, i : i + 5, :], w[:, :, i, 0]) for i in range(2))
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
