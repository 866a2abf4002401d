"""Matmul epilogues of transformers (codegen/cpu/epilogues.py, matmul.py): the element-wise
consumer of a ``[1, S, D] x [D, F]`` matmul (a 2-D matmul whose result gains a unit dim)
is applied in the matmul's output tile, not in a pass of its own.

Each case checks the plan (the matmul has the consumer as its epilogue; no element-wise op
is left to schedule apart) and the numbers against the reference interpreter, on 1 and 2
threads. Inputs standard normal, weights scaled by 1/sqrt(D): outputs of about unit
size, where GELU's erf is curved. Tolerance: rtol 1e-4, atol 1e-5 (float32 sums of up
to 256 products in another order; erf's approximation is within 1.5e-7).
"""

import numpy as np
import pytest

from test_conv_epilogues import compile_and_reference

RNG = np.random.default_rng(7)


def matmul_block(s: int, d: int, f: int, consumer: str) -> str:
    """An ECG ``[1, S, D] x [D, F]`` matmul and its consumer, as a fused block's kernel holds it."""
    x, out = f"tensor<1x{s}x{d}xf32>", f"tensor<1x{s}x{f}xf32>"
    scalar = "tensor<f32>"
    body = {
        "gelu": f"""
  %c2 = "ecg.constant"() {{value = dense<1.41421354> : {scalar}}} : () -> {scalar}
  %c1 = "ecg.constant"() {{value = dense<1.0> : {scalar}}} : () -> {scalar}
  %ch = "ecg.constant"() {{value = dense<0.5> : {scalar}}} : () -> {scalar}
  %q = "ecg.div"(%y, %c2) : ({out}, {scalar}) -> {out}
  %e = "ecg.erf"(%q) : ({out}) -> {out}
  %p = "ecg.add"(%e, %c1) : ({out}, {scalar}) -> {out}
  %m = "ecg.mul"(%y, %p) : ({out}, {out}) -> {out}
  %z = "ecg.mul"(%m, %ch) : ({out}, {scalar}) -> {out}""",
        "bias_relu": f"""
  %a = "ecg.add"(%b, %y) : (tensor<{f}xf32>, {out}) -> {out}
  %z = "ecg.relu"(%a) : ({out}) -> {out}""",
        "residual": f"""
  %z = "ecg.add"(%y, %r) : ({out}, {out}) -> {out}""",
    }[consumer]
    args = f"%x: {x}, %w: tensor<{d}x{f}xf32>, %b: tensor<{f}xf32>, %r: {out}"
    return f"""
func.func @main({args}) -> {out} {{
  %y = "ecg.mat_mul"(%x, %w) : ({x}, tensor<{d}x{f}xf32>) -> {out}{body}
  return %z : {out}
}}"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "s,d,f,consumer",
    [
        (32, 64, 128, "gelu"),  # BERT's FFN: GELU from the accumulators
        (24, 48, 80, "gelu"),  # 80 columns: a partial register tile peeled, with the epilogue
        (16, 256, 64, "bias_relu"),  # a bias along F and ReLU
        (32, 64, 64, "residual"),  # a residual of the result's own shape, collapsed like it
    ],
)
def test_matmul_epilogue(s, d, f, consumer, threads):
    inputs = [RNG.standard_normal((1, s, d)).astype(np.float32),
              (RNG.standard_normal((d, f)) / np.sqrt(d)).astype(np.float32),
              RNG.uniform(-0.5, 0.5, f).astype(np.float32),
              RNG.standard_normal((1, s, f)).astype(np.float32)]
    (got,), (want,), schedules = compile_and_reference(matmul_block(s, d, f, consumer), inputs, threads)
    plan = [(o.op, o.strategy, o.details) for o in schedules]
    assert [o.strategy for o in schedules] == ["matmul"], plan
    assert "epilogue" in schedules[0].details, plan
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
