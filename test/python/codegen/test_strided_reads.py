"""Stride-2 windows on planes narrower than a vector (codegen/cpu/strided_reads.py): each
tap's row is read contiguously over the span its lanes cover and its even lanes are
shuffled out, where LLVM loaded a lane at a time.

Each case is an ECG depthwise convolution of stride 2 (+ bias + ReLU), with and without
padding, on odd and even planes, one with a channel multiplier of 2; checked against
numpy in float64 on AVX2 (x86-64-v3) and AVX-512 (x86-64-v4), at 1 and 2 threads, and
that the rewrite happened (``vector.shuffle`` ops of even lanes after the vector
stage) where the rows are narrower than a vector. Inputs are standard normal, weights
scaled by 1/3 so that about half the outputs are negative and the ReLU cuts them; a tap
that read the odd lanes, or one column off, would be off by about 1. Tolerance: rtol
1e-5, atol 1e-5 (float32 sums of 9 products).
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.ir_walk import walk_ops
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(292)
CPUS = ["x86-64-v3", "x86-64-v4"]


def depthwise_block(c: int, multiplier: int, h: int, w: int, pad: int) -> tuple:
    """(ECG text, output shape) of a 3x3/2 convolution of ``c`` groups, ``multiplier``
    filters each (+ bias), then a ReLU."""
    f, oh, ow = c * multiplier, (h + 2 * pad - 3) // 2 + 1, (w + 2 * pad - 3) // 2 + 1
    x, wt, out = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{f}x1x3x3xf32>", f"tensor<1x{f}x{oh}x{ow}xf32>"
    text = f"""
func.func @main(%x: {x}, %w: {wt}, %b: tensor<{f}xf32>) -> {out} {{
  %y = "ecg.conv"(%x, %w, %b) {{auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = {c} : i64,
      kernel_shape = array<i64: 3, 3>, operandSegmentSizes = array<i32: 1, 1, 1>,
      pads = array<i64: {pad}, {pad}, {pad}, {pad}>, strides = array<i64: 2, 2>}} : ({x}, {wt}, tensor<{f}xf32>) -> {out}
  %z = "ecg.relu"(%y) : ({out}) -> {out}
  return %z : {out}
}}"""
    return text, (1, f, oh, ow)


def reference(x, weights, bias, multiplier: int, pad: int, out_shape):
    """The convolution + bias + ReLU in float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _, f, oh, ow = out_shape
    y = np.zeros(out_shape) + bias.astype(np.float64)[None, :, None, None]
    for o in range(f):
        for i in range(3):
            for j in range(3):
                y[0, o] += weights[o, 0, i, j] * xp[0, o // multiplier, i : i + 2 * oh - 1 : 2, j : j + 2 * ow - 1 : 2]
    return np.maximum(y, 0.0)


def even_shuffles(module: ir.Module) -> int:
    """The ``vector.shuffle`` ops that keep lanes 0, 2, 4, ... of one vector."""
    count = 0
    for op in walk_ops(module.operation, {"vector.shuffle"}):
        mask = list(ir.DenseI64ArrayAttr(op.attributes["mask"]))
        count += op.operands[0] == op.operands[1] and mask == list(range(0, 2 * len(mask), 2))
    return count


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,multiplier,h,w,pad",
    [
        (192, 1, 13, 13, 0),  # MobileNetV2's 13x13 -> 6x6, its input padded before
        (144, 1, 25, 25, 0),  # 25x25 -> 12x12 (12 of 16 lanes, two vectors of 8 on AVX2)
        (40, 1, 14, 14, 1),  # padded, even plane: 14x14 -> 7x7
        (24, 1, 9, 11, 1),  # padded, odd and non-square: 9x11 -> 5x6
        (16, 2, 11, 11, 0),  # two filters per channel
        (8, 1, 5, 5, 0),  # rows of two lanes
    ],
)
def test_strided_depthwise(c, multiplier, h, w, pad, threads, cpu):
    text, out_shape = depthwise_block(c, multiplier, h, w, pad)
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (RNG.standard_normal((c * multiplier, 1, 3, 3)) / 3).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, c * multiplier).astype(np.float32)
    shuffles = []

    def dump(stage, module):
        if stage == "lower-vectors":
            shuffles.append(even_shuffles(module))

    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        target = get_target("host", cpu)
        lower_to_llvm(module, target, threads=threads, dump=dump)
        (got,) = jit(module, threads=threads)["main"](x, weights, bias)
    want = reference(x, weights, bias, multiplier, pad, out_shape)
    if multiplier == 1 and out_shape[3] < target.lanes(32):
        assert shuffles and shuffles[0] > 0, shuffles
    assert 0.2 < np.mean(want == 0) < 0.8  # the ReLU cuts a part, not all or nothing
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
