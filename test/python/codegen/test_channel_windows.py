"""LRN on the CPU: ``channel_windows.py`` sums its window of squared channels in one
element-wise generic over the taps (vectorized, not a scalar reduction loop), the
squares written in place between zero-filled margin channels. Checked against numpy's
LRN (ONNX's formula) to 1e-5 relative: the same five terms added in the same order,
the power computed as sqrt(s) * sqrt(sqrt(s)) for beta 0.75 and by the approximation
of powf otherwise. Shapes: windows wider than the channels (size 5 over 3), even and
odd windows, rows narrower and wider than a vector, a ReLU before the LRN (fused, or
not: the argument itself padded), and one split among two threads."""

import numpy as np
import pytest

from compile_helpers import compile_text
import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.conversion import convert_ecg_to_linalg

RNG = np.random.default_rng(7)

LRN = """
func.func @main(%x: tensor<1x{c}x{h}x{w}xf32>) -> tensor<1x{c}x{h}x{w}xf32> {{
  {relu}
  %y = "ecg.lrn"({source}) {{alpha = {alpha} : f64, beta = {beta} : f64, bias = {bias} : f64, size = {size} : i64}} : (tensor<1x{c}x{h}x{w}xf32>) -> tensor<1x{c}x{h}x{w}xf32>
  return %y : tensor<1x{c}x{h}x{w}xf32>
}}
"""


def lrn_reference(x, size, alpha, beta, bias):
    """ONNX's LRN: x / (bias + alpha / size * sum of squares over channels c - floor((size-1)/2)
    to c + ceil((size-1)/2))^beta, in float64."""
    x = x.astype(np.float64)
    before = (size - 1) // 2
    padded = np.pad(x * x, [(0, 0), (before, size - 1 - before), (0, 0), (0, 0)])
    sums = sum(padded[:, k:k + x.shape[1]] for k in range(size))
    return x / (bias + alpha / size * sums) ** beta


@pytest.mark.parametrize(
    "c,h,w,size,relu,beta,threads",
    [
        (8, 6, 6, 5, True, 0.75, 1),  # AlexNet's LRN, small: relu + LRN in one kernel
        (3, 5, 7, 5, False, 0.75, 1),  # a window wider than the channels, the argument padded
        (7, 13, 13, 4, True, 0.6, 1),  # an even window (1 channel before, 2 after), another beta
        (16, 26, 26, 3, True, 0.75, 2),  # 26-wide rows, two threads
    ],
)
def test_lrn(c, h, w, size, relu, beta, threads):
    alpha, bias = 1e-2, 1.5
    text = LRN.format(c=c, h=h, w=w, size=size, alpha=alpha, beta=beta, bias=bias,
                      relu=f'%r = "ecg.relu"(%x) : (tensor<1x{c}x{h}x{w}xf32>) -> tensor<1x{c}x{h}x{w}xf32>' if relu else "",
                      source="%r" if relu else "%x")
    with dnnf_mlir.make_context():
        linalg = str(convert_ecg_to_linalg(ir.Module.parse(text)))
    compiled, report, _, _ = compile_text(linalg, threads)
    # The window's sum is element-wise (no loop nest over the window's channels, which ran
    # as a scalar reduction), every generic vectorized, zeros written to the margins only.
    generics = [k for k in report.schedules if k.op == "linalg.generic"]
    assert all(len(k.shape) <= 4 and k.strategy == "vectorized" for k in generics), generics
    filled = sum(np.prod(k.shape) for k in report.schedules if k.op == "linalg.fill")
    assert filled == (size - 1) * h * w, report.schedules
    x = (RNG.standard_normal((1, c, h, w)) * 3).astype(np.float32)
    (y,) = compiled.main(x)
    want = lrn_reference(np.maximum(x, 0) if relu else x, size, alpha, beta, bias)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
