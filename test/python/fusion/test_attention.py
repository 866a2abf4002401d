"""Attention blocks (``fusion/attention.py``, ``codegen/cpu/attention.py``): the scores
matmul, the mask add and softmax and the probabilities matmul become one block, which
computes what the three layers computed, and one kernel that loops over the heads.
(test/Transforms/ECGFuse/attention.mlir shows the plans, including the chains that
stay apart.)

The scores are scaled like a real head's (Q and K standard normal, 1/sqrt(d)): their
softmax rows spread over many keys, not one-hot, so a wrong row or head shows. The
mask is -10000 on a random third of the keys per query, as BERT's padding mask.
The interpreter computes the same products in another grouping: rtol 1e-5, atol 1e-6;
the compiled kernel (packed, vectorized, polynomial exp) against float64 numpy:
rtol 1e-4, atol 1e-5.
"""

import re

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.conversion import convert_ecg_to_linalg
from dnnf_mlir.fusion import fuse_module
from dnnf_mlir.fusion.kernels import outline_kernels
from dnnf_mlir.fuzz.invariants import fused_op_problems
from dnnf_mlir.interpreter import interpret

RNG = np.random.default_rng(11)
HEADS, SEQ, DEPTH = 4, 32, 16


def head_chain() -> str:
    """Q [1, h, s, d] and K^T [1, h, d, s] of one layer, a [1, 1, s, s] mask, V; the
    heads merged back into [1, s, h * d]."""
    q, kt, v = f"1x{HEADS}x{SEQ}x{DEPTH}", f"1x{HEADS}x{DEPTH}x{SEQ}", f"1x{HEADS}x{SEQ}x{DEPTH}"
    s, m = f"1x{HEADS}x{SEQ}x{SEQ}", f"1x1x{SEQ}x{SEQ}"
    t, r = f"1x{SEQ}x{HEADS}x{DEPTH}", f"1x{SEQ}x{HEADS * DEPTH}"
    return f"""
func.func @main(%q: tensor<{q}xf32>, %kt: tensor<{kt}xf32>, %mask: tensor<{m}xf32>, %v: tensor<{v}xf32>) -> tensor<{r}xf32> {{
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<{q}xf32>, tensor<{kt}xf32>) -> tensor<{s}xf32>
  %a = "ecg.add"(%s, %mask) : (tensor<{s}xf32>, tensor<{m}xf32>) -> tensor<{s}xf32>
  %p = "ecg.softmax"(%a) {{axis = -1 : i64}} : (tensor<{s}xf32>) -> tensor<{s}xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<{s}xf32>, tensor<{v}xf32>) -> tensor<{v}xf32>
  %t = "ecg.transpose"(%o) {{perm = array<i64: 0, 2, 1, 3>}} : (tensor<{v}xf32>) -> tensor<{t}xf32>
  %r = "ecg.reshape"(%t) {{shape = array<i64: 1, {SEQ}, {HEADS * DEPTH}>}} : (tensor<{t}xf32>) -> tensor<{r}xf32>
  return %r : tensor<{r}xf32>
}}
"""


def inputs() -> list:
    q = RNG.standard_normal((1, HEADS, SEQ, DEPTH)) / np.sqrt(DEPTH)
    kt = RNG.standard_normal((1, HEADS, DEPTH, SEQ))
    mask = np.where(RNG.random((1, 1, SEQ, SEQ)) < 1 / 3, -10000.0, 0.0)
    v = RNG.standard_normal((1, HEADS, SEQ, DEPTH))
    return [x.astype(np.float32) for x in (q, kt, mask, v)]


def reference(q, kt, mask, v):
    """Attention in float64 numpy, and its probabilities."""
    scores = q.astype(np.float64) @ kt + mask
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = (probs @ v).transpose(0, 2, 1, 3).reshape(1, SEQ, HEADS * DEPTH)
    return out, probs


def fused_module(context, attention: bool = True):
    module = ir.Module.parse(head_chain(), context)
    report = fuse_module(module, "dnnf", attention=attention)
    assert module.operation.verify()
    assert not fused_op_problems(module.body.operations[0].operation)
    return module, report


def test_inputs_make_a_spread_softmax():
    """The premise of the tolerances: no row of probabilities is nearly one-hot."""
    _, probs = reference(*inputs())
    assert probs.max() < 0.9 and (probs > 1e-3).sum(-1).min() >= 4


def test_one_block_computes_what_three_layers_did():
    x = inputs()
    context = dnnf_mlir.make_context()
    merged, report = fused_module(context)
    apart, apart_report = fused_module(context, attention=False)
    assert report["total"]["decisions"]["attention"] == {"blocks": 1}
    assert (report["total"]["ops_after"], apart_report["total"]["ops_after"]) == (1, 3)
    assert report["total"]["ir_bytes_after"] < apart_report["total"]["ir_bytes_after"] / 3
    want = interpret(apart, x)[0]
    np.testing.assert_allclose(interpret(merged, x)[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(want, reference(*x)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_kernel_loops_over_the_heads(threads):
    x = inputs()
    with dnnf_mlir.make_context() as context, ir.Location.unknown():
        module, _ = fused_module(context)
        assert outline_kernels(module.operation) == (1, 1)
        convert_ecg_to_linalg(module)
        stages = {}
        report = lower_to_llvm(module, "host", threads=threads, dump=lambda stage, m: stages.setdefault(stage, str(m)))
        got = jit(module, threads=threads)["main"](*x)[0]
    (loop,) = [s for s in report.schedules if s.strategy == "head-loop"]
    assert loop.shape == (HEADS, SEQ, DEPTH)
    assert {s.function for s in report.schedules if s.function} == {"kernel_0_mat_mul_add_softmax_etc"}
    # The scores and probabilities are buffers of one head, allocated in the loop; so
    # is its P @ V, which the transpose merging the heads stores straight into the
    # result: no buffer is bigger than one head's scores.
    allocations = re.findall(r"memref.alloc\(\).*: memref<([0-9x]+)xf32>", stages["bufferize"])
    assert [a for a in allocations if a.endswith(f"1x{SEQ}x{SEQ}")]
    assert max(np.prod([int(d) for d in a.split("x")]) for a in allocations) == SEQ * SEQ
    np.testing.assert_allclose(got, reference(*x)[0], rtol=1e-4, atol=1e-5)


def test_a_chain_that_does_not_fuse_compiles_op_by_op():
    """A sequence of one (found by the fuzzer): the unit dims fold differently in each op
    and the slices of one head cannot reach the scores; the function keeps its ops apart
    (transform.alternatives), the report says so, and the results are right."""
    text = """
func.func @main(%q: tensor<17x1x1x4xf32>, %kt: tensor<17x1x4x1xf32>, %v: tensor<17x1x1x4xf32>) -> tensor<17x1x1x4xf32> {
  %s = "ecg.mat_mul"(%q, %kt) : (tensor<17x1x1x4xf32>, tensor<17x1x4x1xf32>) -> tensor<17x1x1x1xf32>
  %p = "ecg.softmax"(%s) {axis = -1 : i64} : (tensor<17x1x1x1xf32>) -> tensor<17x1x1x1xf32>
  %o = "ecg.mat_mul"(%p, %v) : (tensor<17x1x1x1xf32>, tensor<17x1x1x4xf32>) -> tensor<17x1x1x4xf32>
  return %o : tensor<17x1x1x4xf32>
}
"""
    q, kt, v = (RNG.standard_normal(shape).astype(np.float32) for shape in ((17, 1, 1, 4), (17, 1, 4, 1), (17, 1, 1, 4)))
    with dnnf_mlir.make_context() as context, ir.Location.unknown():
        module = ir.Module.parse(text, context)
        assert fuse_module(module, "dnnf")["total"]["decisions"]["attention"] == {"blocks": 1}
        outline_kernels(module.operation)
        convert_ecg_to_linalg(module)
        report = lower_to_llvm(module, "host")
        got = jit(module)["main"](q, kt, v)[0]
    assert [s.strategy for s in report.schedules if "head" in s.strategy] == ["head-loop not fused: ops apart"]
    np.testing.assert_allclose(got, v, rtol=1e-6)  # a softmax over one key is 1


def test_a_mask_other_kernels_read_stays_out_of_the_head_loop():
    """BERT's first layer computes the additive mask that every layer reads: the mask
    is an output of its attention kernel, so it is computed whole before the head loop,
    which still holds the rest of the chain."""
    q, kt, mask, v = inputs()
    keep = (mask == 0).astype(np.float32)
    m = f"1x1x{SEQ}x{SEQ}"
    text = head_chain().replace(
        f"%mask: tensor<{m}xf32>", f"%keep: tensor<{m}xf32>").replace(
        f"-> tensor<1x{SEQ}x{HEADS * DEPTH}xf32> {{", f"-> (tensor<1x{SEQ}x{HEADS * DEPTH}xf32>, tensor<{m}xf32>) {{\n"
        f'  %big = "ecg.constant"() {{value = dense<10000.0> : tensor<f32>}} : () -> tensor<f32>\n'
        f'  %one = "ecg.constant"() {{value = dense<1.0> : tensor<f32>}} : () -> tensor<f32>\n'
        f'  %off = "ecg.sub"(%keep, %one) : (tensor<{m}xf32>, tensor<f32>) -> tensor<{m}xf32>\n'
        f'  %mask = "ecg.mul"(%off, %big) : (tensor<{m}xf32>, tensor<f32>) -> tensor<{m}xf32>').replace(
        f"return %r : tensor<1x{SEQ}x{HEADS * DEPTH}xf32>",
        f"return %r, %mask : tensor<1x{SEQ}x{HEADS * DEPTH}xf32>, tensor<{m}xf32>")
    with dnnf_mlir.make_context() as context, ir.Location.unknown():
        module = ir.Module.parse(text, context)
        report = fuse_module(module, "dnnf")
        assert (report["total"]["ops_after"], report["total"]["decisions"]["attention"]) == (1, {"blocks": 1})
        outline_kernels(module.operation)
        convert_ecg_to_linalg(module)
        lowered = lower_to_llvm(module, "host")
        got, got_mask = jit(module)["main"](q, kt, keep, v)
    assert [s.strategy for s in lowered.schedules if "head" in s.strategy] == ["head-loop"]
    np.testing.assert_array_equal(got_mask, mask)
    np.testing.assert_allclose(got, reference(q, kt, mask, v)[0], rtol=1e-4, atol=1e-5)


def test_heads_merged_into_the_innermost_dim_keep_p_at_v_as_the_root():
    """A transpose that moves the heads innermost ([1, h, s, d] -> [1, s, d, h], found by
    the fuzzer) is not the loop's root: a head's part of it is a strided column, while
    its schedule vectorizes that dim whole. The loop's root is then P @ V, as without a
    transpose, and the results are right."""
    q, kt, mask, v = inputs()
    text = head_chain().replace("perm = array<i64: 0, 2, 1, 3>", "perm = array<i64: 0, 2, 3, 1>").replace(
        f"tensor<1x{SEQ}x{HEADS}x{DEPTH}xf32>", f"tensor<1x{SEQ}x{DEPTH}x{HEADS}xf32>")
    with dnnf_mlir.make_context() as context, ir.Location.unknown():
        module = ir.Module.parse(text, context)
        assert fuse_module(module, "dnnf")["total"]["ops_after"] == 1
        outline_kernels(module.operation)
        convert_ecg_to_linalg(module)
        lowered = lower_to_llvm(module, "host")
        got = jit(module)["main"](q, kt, mask, v)[0]
    (loop,) = [s for s in lowered.schedules if "head" in s.strategy]
    assert (loop.strategy, loop.shape) == ("head-loop", (HEADS, SEQ, DEPTH))
    _, probs = reference(q, kt, mask, v)
    want = (probs @ v).transpose(0, 2, 3, 1).reshape(1, SEQ, HEADS * DEPTH)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
