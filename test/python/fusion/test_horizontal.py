"""Horizontal fusion (``fusion/horizontal.py``): merged sibling contractions compute
what the separate ones computed, under the reference interpreter, and the merged
blocks stay within the fused op's limits. (test/Transforms/ECGFuse/horizontal.mlir
shows the IR; the fuzzer's ``siblings`` family checks compiled code.)

Inputs and weights are standard normal; merging only regroups the columns of each
product, so results agree to float32 rounding: rtol 1e-5, atol 1e-5.
"""

import numpy as np

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.ecg.ops.structure import MAX_FUSED_OUTPUTS
from dnnf_mlir.fusion import fuse_module
from dnnf_mlir.fuzz.invariants import fused_op_problems
from dnnf_mlir.interpreter import interpret

RNG = np.random.default_rng(7)


def dense(shape) -> str:
    """An MLIR dense attribute of standard normal float32 values."""
    values = RNG.standard_normal(shape).astype(np.float32)
    return f'dense<"0x{values.tobytes().hex().upper()}"> : tensor<{"x".join(map(str, shape))}xf32>'


def constant(name, shape) -> str:
    tensor = f'tensor<{"x".join(map(str, shape))}xf32>'
    return f'  %{name} = "ecg.constant"() {{value = {dense(shape)}}} : () -> {tensor}\n'


CONV = ('{{auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, '
        'operandSegmentSizes = array<i32: 1, 1, {bias}>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}}')


def fused_and_unfused(text: str, inputs: list):
    """The interpreter's results for the module ``text`` as it is and after ecg-fuse
    (dnnf), and the fuse report."""
    context = dnnf_mlir.make_context()
    module = ir.Module.parse(text, context)
    want = interpret(module, inputs)
    report = fuse_module(module, "dnnf")
    assert module.operation.verify()
    for function in module.body.operations:
        assert not fused_op_problems(function.operation)
    return interpret(module, inputs), want, report


def test_convolutions_with_and_without_bias_and_a_shared_epilogue():
    """3x3 convolutions (one without a bias: zeros stand in), each adding its own
    per-channel constant then a ReLU: one convolution, one add, one ReLU."""
    text = (
        "func.func @main(%x: tensor<1x3x5x5xf32>) -> "
        "(tensor<1x2x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x1x5x5xf32>) {\n"
        + constant("w0", (2, 3, 3, 3)) + constant("b0", (2,)) + constant("w1", (4, 3, 3, 3))
        + constant("w2", (1, 3, 3, 3)) + constant("b2", (1,))
        + constant("c0", (2, 1, 1)) + constant("c1", (4, 1, 1)) + constant("c2", (1, 1, 1))
    )
    for i, (bias, m) in enumerate([(True, 2), (False, 4), (True, 1)]):
        operands = f"%x, %w{i}" + (f", %b{i}" if bias else "")
        types = f"tensor<1x3x5x5xf32>, tensor<{m}x3x3x3xf32>" + (f", tensor<{m}xf32>" if bias else "")
        out = f"tensor<1x{m}x5x5xf32>"
        text += (f'  %y{i} = "ecg.conv"({operands}) {CONV.format(bias=int(bias))} : ({types}) -> {out}\n'
                 f'  %a{i} = "ecg.add"(%y{i}, %c{i}) : ({out}, tensor<{m}x1x1xf32>) -> {out}\n'
                 f'  %r{i} = "ecg.relu"(%a{i}) : ({out}) -> {out}\n')
    text += "  return %r0, %r1, %r2 : tensor<1x2x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x1x5x5xf32>\n}\n"
    got, want, report = fused_and_unfused(text, [RNG.standard_normal((1, 3, 5, 5)).astype(np.float32)])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert report["total"]["decisions"]["horizontal"] == {"groups": 1, "contractions": 3}
    assert report["total"]["ops_after"] == 1
    assert text.count('"ecg.conv"') == 3


def test_more_siblings_than_outputs_split_into_groups():
    """Ten projections of one input: the fused op holds at most MAX_FUSED_OUTPUTS
    results, so they merge in two groups, and each result is still right."""
    count = 10
    text = "func.func @main(%x: tensor<3x8xf32>) -> (" + ", ".join(["tensor<3x5xf32>"] * count) + ") {\n"
    for i in range(count):
        text += constant(f"w{i}", (8, 5))
        text += f'  %y{i} = "ecg.mat_mul"(%x, %w{i}) : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>\n'
    results = ", ".join(f"%y{i}" for i in range(count))
    text += f"  return {results} : " + ", ".join(["tensor<3x5xf32>"] * count) + "\n}\n"
    got, want, report = fused_and_unfused(text, [RNG.standard_normal((3, 8)).astype(np.float32)])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert report["total"]["decisions"]["horizontal"] == {"groups": 2, "contractions": count}
    assert report["total"]["ops_after"] == 2
    assert MAX_FUSED_OUTPUTS < count


def test_batched_input_and_a_branch_with_a_residual():
    """Projections of a [2, 3, 8] input; the branch whose matmul adds another
    computed value (its epilogue) stays out, the others merge."""
    text = (
        "func.func @main(%x: tensor<2x3x8xf32>, %r: tensor<2x3x6xf32>) -> "
        "(tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>) {\n"
        + constant("w0", (8, 6)) + constant("w1", (8, 6)) + constant("w2", (8, 6))
        + '  %y0 = "ecg.mat_mul"(%x, %w0) : (tensor<2x3x8xf32>, tensor<8x6xf32>) -> tensor<2x3x6xf32>\n'
        + '  %y1 = "ecg.mat_mul"(%x, %w1) : (tensor<2x3x8xf32>, tensor<8x6xf32>) -> tensor<2x3x6xf32>\n'
        + '  %t1 = "ecg.tanh"(%y1) : (tensor<2x3x6xf32>) -> tensor<2x3x6xf32>\n'
        + '  %y2 = "ecg.mat_mul"(%x, %w2) : (tensor<2x3x8xf32>, tensor<8x6xf32>) -> tensor<2x3x6xf32>\n'
        + '  %s2 = "ecg.add"(%y2, %r) : (tensor<2x3x6xf32>, tensor<2x3x6xf32>) -> tensor<2x3x6xf32>\n'
        + "  return %y0, %t1, %s2 : tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>\n}\n"
    )
    inputs = [RNG.standard_normal((2, 3, 8)).astype(np.float32), RNG.standard_normal((2, 3, 6)).astype(np.float32)]
    got, want, report = fused_and_unfused(text, inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert report["total"]["decisions"]["horizontal"] == {"groups": 1, "contractions": 2}
    assert report["total"]["ops_after"] == 2


def test_swiglu_gate_reads_the_up_projection():
    """silu(x @ Wg) * (x @ Wu): the gate's block reads the up projection, a sibling,
    so the two merge into one block reading only x; the up projection, written out
    before, is not any more."""
    text = (
        "func.func @main(%x: tensor<4x8xf32>) -> tensor<4x6xf32> {\n"
        + constant("wg", (8, 6)) + constant("wu", (8, 6))
        + '  %g = "ecg.mat_mul"(%x, %wg) : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>\n'
        + '  %s = "ecg.sigmoid"(%g) : (tensor<4x6xf32>) -> tensor<4x6xf32>\n'
        + '  %a = "ecg.mul"(%g, %s) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>\n'
        + '  %u = "ecg.mat_mul"(%x, %wu) : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>\n'
        + '  %y = "ecg.mul"(%a, %u) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>\n'
        + "  return %y : tensor<4x6xf32>\n}\n"
    )
    got, want, report = fused_and_unfused(text, [RNG.standard_normal((4, 8)).astype(np.float32)])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    assert report["total"]["decisions"]["horizontal"] == {"groups": 1, "contractions": 2}
    assert report["total"]["ops_after"] == 1
    assert report["total"]["ir_bytes_after"] == 4 * 6 * 4


def test_a_scalar_tail_is_applied_once():
    """Each projection divided by the same scalar, then tanh: both ops move before
    the slices (a scalar constant is not concatenated, it is shared)."""
    text = "func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x5xf32>) {\n" + constant("w0", (8, 3)) \
        + constant("w1", (8, 5)) + '  %d = "ecg.constant"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>\n'
    for i, n in enumerate((3, 5)):
        text += (f'  %y{i} = "ecg.mat_mul"(%x, %w{i}) : (tensor<4x8xf32>, tensor<8x{n}xf32>) -> tensor<4x{n}xf32>\n'
                 f'  %q{i} = "ecg.div"(%y{i}, %d) : (tensor<4x{n}xf32>, tensor<f32>) -> tensor<4x{n}xf32>\n'
                 f'  %t{i} = "ecg.tanh"(%q{i}) : (tensor<4x{n}xf32>) -> tensor<4x{n}xf32>\n')
    text += "  return %t0, %t1 : tensor<4x3xf32>, tensor<4x5xf32>\n}\n"
    context = dnnf_mlir.make_context()
    module = ir.Module.parse(text, context)
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    want = interpret(module, [x])
    fuse_module(module, "dnnf")
    for g, w in zip(interpret(module, [x]), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    body = str(module)
    assert body.count('"ecg.div"') == 1 and body.count('"ecg.tanh"') == 1 and body.count('"ecg.mat_mul"') == 1


def test_projections_to_heads_merge_only_where_the_target_merges_them():
    """BERT's Q/K/V, each reshaped and transposed to its heads (K transposed): a CPU
    target keeps the three matmuls apart (``Target.merges_laid_out_projections``), a
    Vulkan one merges them; both compute what the unfused module does."""
    text = "func.func @main(%x: tensor<6x8xf32>) -> (" + ", ".join(["tensor<2x6x4xf32>", "tensor<2x4x6xf32>",
                                                                   "tensor<2x6x4xf32>"]) + ") {\n"
    for i, perm in enumerate(("1, 0, 2", "1, 2, 0", "1, 0, 2")):
        out = "tensor<2x4x6xf32>" if perm == "1, 2, 0" else "tensor<2x6x4xf32>"
        text += (constant(f"w{i}", (8, 8))
                 + f'  %y{i} = "ecg.mat_mul"(%x, %w{i}) : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>\n'
                 f'  %r{i} = "ecg.reshape"(%y{i}) {{shape = array<i64: 6, 2, 4>}} : (tensor<6x8xf32>) -> tensor<6x2x4xf32>\n'
                 f'  %h{i} = "ecg.transpose"(%r{i}) {{perm = array<i64: {perm}>}} : (tensor<6x2x4xf32>) -> {out}\n')
    text += "  return %h0, %h1, %h2 : tensor<2x6x4xf32>, tensor<2x4x6xf32>, tensor<2x6x4xf32>\n}\n"
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    for target, merged in (("host", False), ("vulkan", True)):
        module = ir.Module.parse(text, dnnf_mlir.make_context())
        want = interpret(module, [x])
        report = fuse_module(module, "dnnf", target=target)
        for g, w in zip(interpret(module, [x]), want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        groups = report["total"]["decisions"]["horizontal"]["groups"]
        assert (groups, str(module).count('"ecg.mat_mul"')) == ((1, 1) if merged else (0, 3)), target
