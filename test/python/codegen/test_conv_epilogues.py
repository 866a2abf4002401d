"""Convolution epilogues (codegen/cpu/epilogues.py, conv.py, matmul.py): the bias,
activation and residual add after a convolution are applied in its output tile.

Each case checks the plan (which op got which consumer as its epilogue, or none) and
the numbers against the reference interpreter, on 1 and 2 threads. Inputs are
standard normal, weights scaled by 1/sqrt(fan-in) so that about half the outputs are
negative and the ReLU cuts them. Tolerance: rtol 1e-4, atol 1e-5, float32 sums of up
to 576 products in another order.
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(5)


def conv_block(c, f, h, w, k, stride, residual: bool) -> str:
    """An ECG conv (+ bias) [+ residual add] + relu, as a fused block's kernel holds it."""
    pad = k // 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    x, wt, out = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{f}x{c}x{k}x{k}xf32>", f"tensor<1x{f}x{oh}x{ow}xf32>"
    args = f"%x: {x}, %w: {wt}, %b: tensor<{f}xf32>" + (f", %r: {out}" if residual else "")
    add = f'%a = "ecg.add"(%y, %r) : ({out}, {out}) -> {out}' if residual else ""
    relu_in = "%a" if residual else "%y"
    return f"""
func.func @main({args}) -> {out} {{
  %y = "ecg.conv"(%x, %w, %b) {{auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64,
      kernel_shape = array<i64: {k}, {k}>, operandSegmentSizes = array<i32: 1, 1, 1>,
      pads = array<i64: {pad}, {pad}, {pad}, {pad}>, strides = array<i64: {stride}, {stride}>}}
      : ({x}, {wt}, tensor<{f}xf32>) -> {out}
  {add}
  %z = "ecg.relu"({relu_in}) : ({out}) -> {out}
  return %z : {out}
}}"""


def compile_and_reference(text: str, inputs, threads: int):
    """(compiled results, interpreter results, schedules) of an ECG module."""
    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(text)
        want = interpret(module, inputs)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        report = lower_to_llvm(module, "host", threads=threads)
        got = jit(module, threads=threads)["main"](*inputs)
    return got, want, report.schedules


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,f,h,w,k,stride,residual,epilogue",
    [
        (16, 32, 14, 14, 3, 1, False, "conv2d"),  # width 14 widened to 16: bias + relu widened too
        (8, 16, 9, 20, 3, 2, False, "conv2d"),  # strided, split by phase: the last phase takes it
        (16, 32, 14, 14, 3, 1, True, None),  # a residual would need a padded copy: separate
        (16, 32, 8, 16, 3, 1, True, "conv2d"),  # width already whole vectors: residual fused
        (32, 64, 8, 8, 1, 1, True, "matmul"),  # 1x1 as a matmul: bias + residual + relu collapsed
        (32, 64, 16, 16, 1, 2, False, "matmul"),  # strided 1x1
        (32, 64, 6, 6, 1, 1, True, "matmul"),  # 36 columns: the partial tile of 4 peeled, the epilogue in both
        # 196 columns (rows off the cache lines) and 8 row tiles: each prefetches the next one's rows, clamped
        (32, 64, 14, 14, 1, 1, True, "matmul"),
        # Output rows narrower than a vector (4 wide): the patches' matmul, bias + relu collapsed
        (32, 48, 8, 8, 3, 2, False, "matmul"),
        (16, 24, 4, 4, 3, 1, True, "matmul"),  # and a residual too (16 columns: no padding)
    ],
)
def test_conv_epilogue(c, f, h, w, k, stride, residual, epilogue, threads):
    text = conv_block(c, f, h, w, k, stride, residual)
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (RNG.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, f).astype(np.float32)
    inputs = [x, weights, bias]
    if residual:
        oh, ow = (h + 2 * (k // 2) - k) // stride + 1, (w + 2 * (k // 2) - k) // stride + 1
        inputs.append(RNG.standard_normal((1, f, oh, ow)).astype(np.float32))
    (got,), (want,), schedules = compile_and_reference(text, inputs, threads)
    with_epilogue = [s.strategy for s in schedules if "epilogue" in s.details]
    assert with_epilogue == ([epilogue] if epilogue else []), [(s.strategy, s.details) for s in schedules]
    assert 0.2 < np.mean(want == 0) < 0.8  # the ReLU cuts a part, not all or nothing
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
