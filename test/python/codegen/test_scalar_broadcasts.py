"""Per-channel constants broadcast over a plane (codegen/cpu/scalar_broadcasts.py): a
vector read of one element broadcast over its lanes becomes a scalar load and a
broadcast, where vector-to-scf loaded and inserted a lane at a time.

Each case is an ECG requantizing epilogue as QLinearConv's importer builds it: an int32
tensor plus a per-channel int32 bias, converted to f32, times a per-channel scale,
quantized to u8 (the bias and scale ``[C, 1, 1]``, broadcast over the ``H x W`` plane);
checked exactly against numpy on AVX2 (x86-64-v3) and AVX-512 (x86-64-v4), at 1 and 2
threads, and that no broadcast read is left after the vector stage. Inputs are random
int32 sums of the size a 3x3 convolution's are, scales such that the outputs cover
0 ... 255 and saturate at both ends; a lane given another channel's bias or scale, or
the wrong element, changes its byte.
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.ir_walk import walk_ops
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(2911)
CPUS = ["x86-64-v3", "x86-64-v4"]


def requantize_block(c: int, h: int, w: int) -> str:
    """ECG text of ``u8(round(float(x + bias) * scale) + 128)``, saturated, per channel."""
    x, i32, f32 = f"tensor<1x{c}x{h}x{w}xi32>", f"tensor<{c}x1x1xi32>", f"tensor<1x{c}x{h}x{w}xf32>"
    return f"""
func.func @main(%x: {x}, %bias: {i32}, %scale: tensor<{c}x1x1xf32>) -> tensor<1x{c}x{h}x{w}xui8> {{
  %s = "ecg.add"(%x, %bias) : ({x}, {i32}) -> {x}
  %f = "ecg.cast"(%s) {{to = "f32"}} : ({x}) -> {f32}
  %m = "ecg.mul"(%f, %scale) : ({f32}, tensor<{c}x1x1xf32>) -> {f32}
  %one = "ecg.constant"() {{value = dense<1.0> : tensor<f32>}} : () -> tensor<f32>
  %zero = "ecg.constant"() {{value = dense<128> : tensor<ui8>}} : () -> tensor<ui8>
  %q = "ecg.quantize_linear"(%m, %one, %zero) : ({f32}, tensor<f32>, tensor<ui8>) -> tensor<1x{c}x{h}x{w}xui8>
  return %q : tensor<1x{c}x{h}x{w}xui8>
}}"""


def broadcast_reads(module: ir.Module) -> int:
    """The ``vector.transfer_read`` ops whose map broadcasts (a constant result)."""
    count = 0
    for op in walk_ops(module.operation, {"vector.transfer_read"}):
        results = ir.AffineMapAttr(op.attributes["permutation_map"]).value.results
        count += any(isinstance(e, ir.AffineConstantExpr) for e in results)
    return count


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,h,w", [(32, 16, 16), (16, 32, 32), (24, 7, 9)])
def test_per_channel_requantization(c, h, w, threads, cpu):
    x = RNG.integers(-60000, 60000, (1, c, h, w)).astype(np.int32)
    bias = RNG.integers(-3000, 3000, (c, 1, 1)).astype(np.int32)
    scale = RNG.uniform(0.001, 0.004, (c, 1, 1)).astype(np.float32)
    left = []

    def dump(stage, module):
        if stage == "lower-vectors":
            left.append(broadcast_reads(module))

    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(requantize_block(c, h, w))
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        lower_to_llvm(module, get_target("host", cpu), threads=threads, dump=dump)
        (got,) = jit(module, threads=threads)["main"](x, bias, scale)
    real = ((x + bias).astype(np.float32) * scale).astype(np.float32)
    want = np.clip(np.rint(real) + 128, 0, 255).astype(np.uint8)
    assert left == [0]
    assert np.mean(want == 0) > 0.05 and np.mean(want == 255) > 0.05  # both ends saturate
    np.testing.assert_array_equal(got.view(np.uint8), want)
