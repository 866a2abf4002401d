"""Winograd F(4x4, 3x3) convolutions (codegen/winograd.py, dnnf-winograd) compiled for the
host (and for AArch64, run under qemu) against a float64 reference and onnxruntime.

Odd shapes (H, W not multiples of 4, odd and prime channel counts, two images), padding
0, 1 and asymmetric, with a fused bias + ReLU and a residual add + ReLU, compiled with
``winograd="strict"`` so that every convolution takes the Winograd path (or the
compilation fails). Inputs standard normal, filters scaled by 1/sqrt(9 C) so outputs
are O(1). Tolerance: max abs error against float64 at most 2e-5 + 1e-4 * |want|,
and no more than 64 times (6 bits) the error of onnxruntime's direct f32 convolution
plus 2e-6: over 13 draws of the inputs the ratio was 6 to 39 on these shapes (F(4x4, 3x3)'s
coefficients go up to 8 and 1/24, and onnxruntime's error over 27 to 288 products is small,
at times very small), while a 1e-3 error in one transform coefficient is off by ~1e-3. Each
model draws its inputs from its own seeded generator, so that they do not depend on which
tests ran before it in the process (a 39 drawn under a 32 bound failed the test when run alone). The cases of
one target and thread count are branches of one model, compiled once (each compile
costs seconds whatever its size), and checked output by output.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.winograd import A_T, B_T, G, transformed_filters
from dnnf_mlir.codegen.winograd_pass import winograd_convolutions
from dnnf_mlir.context import make_context

RNG = np.random.default_rng(4343)


def reference_conv(x, w, pads):
    """Cross-correlation in float64 (ONNX Conv, stride 1, dilation 1)."""
    top, left, bottom, right = pads[0], pads[1], pads[2], pads[3]
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (top, bottom), (left, right)])
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,kc->nkhw", x[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
    return out


def test_transform_matrices_compute_the_correlation():
    """``A^T [(G g G^T) . (B^T d B)] A`` of one 6x6 tile is its 4x4 correlation with g."""
    d, g = RNG.standard_normal((6, 6)), RNG.standard_normal((3, 3))
    got = A_T @ ((G @ g @ G.T) * (B_T @ d @ B_T.T)) @ A_T.T
    want = np.array([[np.sum(d[i:i + 3, j:j + 3] * g) for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_transformed_filters_layout():
    """[K, C, 3, 3] -> [36, K, C] with point (a, b) at a * 6 + b."""
    w = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    u = transformed_filters(w)
    assert u.shape == (36, 5, 3) and u.dtype == np.float32
    np.testing.assert_allclose(u[2 * 6 + 4, 1, 2], (G @ w[1, 2].astype(np.float64) @ G.T)[2, 4], rtol=1e-6)


def _branch(rng, index, n, c, k, h, w, pads, residual):
    """Case ``index``: Conv (+ residual Add) + Relu from ``x{index}`` (and ``r{index}``) to
    ``y{index}``; its graph inputs, nodes, initializers, feeds and float64 result."""
    x, y = f"x{index}", f"y{index}"
    weights = (rng.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    bias = rng.standard_normal(k).astype(np.float32)
    feeds = {x: rng.standard_normal((n, c, h, w)).astype(np.float32)}
    want = reference_conv(feeds[x], weights, pads) + bias[None, :, None, None]
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n, c, h, w])]
    nodes = [helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [f"conv{index}"], pads=pads)]
    last = f"conv{index}"
    if residual:
        feeds[f"r{index}"] = rng.standard_normal(want.shape).astype(np.float32)
        want = want + feeds[f"r{index}"]
        inputs.append(helper.make_tensor_value_info(f"r{index}", TensorProto.FLOAT, list(want.shape)))
        nodes.append(helper.make_node("Add", [last, f"r{index}"], [f"sum{index}"]))
        last = f"sum{index}"
    nodes.append(helper.make_node("Relu", [last], [y]))
    initializers = [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
    return inputs, nodes, initializers, feeds, np.maximum(want, 0)


def _model(cases):
    """One model of every case in ``cases`` side by side (compiled once); its feeds and
    the float64 result of each case."""
    rng = np.random.default_rng(4343)
    inputs, nodes, initializers, feeds, wants = [], [], [], {}, []
    for index, case in enumerate(cases):
        branch_inputs, branch_nodes, branch_initializers, branch_feeds, want = _branch(rng, index, *case)
        inputs += branch_inputs
        nodes += branch_nodes
        initializers += branch_initializers
        feeds.update(branch_feeds)
        wants.append(want)
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(cases))]
    graph = helper.make_graph(nodes, "winograd", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, wants


# (n, c, k, h, w, pads, residual); the cases of one target and thread count are compiled as one model.
HOST_CASES = [
    (1, 5, 7, 11, 13, [1, 1, 1, 1], False),  # odd channels, H and W not multiples of 4
    (1, 3, 16, 9, 10, [0, 0, 0, 0], False),  # no padding: 7x8 outputs
    (2, 17, 9, 14, 23, [1, 1, 1, 1], True),  # two images, a residual add
    (1, 32, 33, 19, 6, [0, 1, 2, 1], True),  # asymmetric pads, a prime width of outputs
    (1, 9, 12, 12, 16, [1, 1, 1, 1], True),  # whole tiles: the epilogue folded into the output transform
    (2, 19, 21, 13, 13, [1, 1, 1, 1], True),  # 16 tiles an image, transformed flat; two images
    (1, 7, 10, 5, 15, [1, 1, 1, 1], False),  # 2 x 4 tiles, flat; prime sizes
    (1, 16, 64, 27, 29, [1, 1, 1, 1], False),  # 16 channels widened to 64 (auto takes SqueezeNet's), odd sizes
]
TWO_THREAD_CASES = [  # split among two threads
    (1, 64, 64, 16, 16, [1, 1, 1, 1], True),
    (1, 32, 128, 27, 27, [1, 1, 1, 1], False),  # SqueezeNet's: 49 tiles, one vector wide (AVX-512)
]
AARCH64_CASES = [  # NEON, run under qemu
    (1, 17, 9, 14, 23, [1, 1, 1, 1], True),  # partial tiles
    (1, 9, 12, 12, 16, [1, 1, 1, 1], True),  # the epilogue folded
]


@pytest.mark.parametrize("cases,threads,target", [
    (HOST_CASES, 1, "host"),
    (TWO_THREAD_CASES, 2, "host"),
    (AARCH64_CASES, 1, "aarch64"),
])
def test_conv_bias_relu_against_float64_and_onnxruntime(cases, threads, target):
    model, feeds, wants = _model(cases)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ort = session.run(None, feeds)
    got = InferenceSession(model, target=target, use_cache=False, threads=threads, winograd="strict").run(None, feeds)
    for case, case_got, case_ort, want in zip(cases, got, ort, wants, strict=True):
        assert case_got.shape == want.shape, case
        np.testing.assert_allclose(case_got, want, rtol=1e-4, atol=2e-5, err_msg=str(case))
        assert np.abs(case_got - want).max() <= 64 * np.abs(case_ort - want).max() + 2e-6, case


def test_strict_refuses_what_it_cannot_rewrite():
    """A stride-2 convolution with winograd="strict": a compile error naming the op."""
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2])], "strided",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(Exception, match="stride-1, dilation-1"):
        InferenceSession(model, use_cache=False, threads=1, winograd="strict").run(
            None, {"x": np.ones((1, 4, 9, 9), np.float32)})


def _conv_module(c: int, k: int, size: int) -> str:
    """A function of one padded 3x3 convolution whose filters are a (non-splat) constant."""
    filters = np.arange(k * c * 9, dtype=np.float32).reshape(k, c, 3, 3) / (k * c * 9)
    return f"""
func.func @conv(%x: tensor<1x{c}x{size + 2}x{size + 2}xf32>) -> tensor<1x{k}x{size}x{size}xf32> {{
  %w = arith.constant dense<"0x{filters.tobytes().hex()}"> : tensor<{k}x{c}x3x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x{k}x{size}x{size}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x{k}x{size}x{size}xf32>) -> tensor<1x{k}x{size}x{size}xf32>
  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
       ins(%x, %w : tensor<1x{c}x{size + 2}x{size + 2}xf32>, tensor<{k}x{c}x3x3xf32>)
       outs(%f : tensor<1x{k}x{size}x{size}xf32>) -> tensor<1x{k}x{size}x{size}xf32>
  return %y : tensor<1x{k}x{size}x{size}xf32>
}}"""


@pytest.mark.parametrize("c,k,size,threads,rewritten", [
    (64, 64, 16, 1, True),  # 16 tiles of 64 channels: faster (winograd_cost.py)
    (64, 48, 13, 1, True),  # 16 tiles, partial ones included
    (64, 64, 12, 1, False),  # 9 tiles: the transforms cost more than the matmul saves
    (32, 128, 28, 1, True),  # 32 input channels widened to 128: faster (0.83, SqueezeNet's fire4)
    (16, 64, 55, 1, True),  # 16 widened to 64: faster (0.65 alone, SqueezeNet's fire2 and fire3)
    (16, 64, 28, 1, True),  # the same on fewer tiles: 0.80 (AVX-512), 0.60 (AVX2)
    (16, 32, 28, 1, False),  # 16 input channels to 32: too few outputs
    (8, 64, 28, 1, False),  # 8 input channels: too few
    (32, 128, 28, 2, True),  # widened, two threads, 14 M a thread: faster (SqueezeNet's 27x27: 0.78)
    (16, 64, 55, 2, True),  # widened, two threads, 14 M a thread: faster (SqueezeNet's 55x55: 0.55)
    (16, 64, 28, 2, False),  # widened, two threads, 3.6 M a thread: the fork/joins cost more
    (64, 64, 16, 2, False),  # two threads, 4.7 M a thread: the fork/joins of six parallel regions cost more
    (48, 48, 28, 2, True),  # two threads, 8 M a thread: 0.91 on idle cores (busy ones: dynamic teams)
    (48, 192, 13, 2, True),  # two threads, 7 M a thread: faster (SqueezeNet's 13x13 expand)
    (64, 64, 28, 2, True),  # two threads, 29 M: faster (0.78 on idle cores)
    (96, 96, 28, 2, True),  # two threads, 65 M: faster (0.59)
    (64, 64, 56, 2, True),  # two threads, 116 M: faster (0.52)
    (512, 512, 7, 2, False),  # 4 tiles: too few on any thread count
])
def test_auto_mode_takes_the_layers_measured_faster(c, k, size, threads, rewritten):
    with make_context():
        module = ir.Module.parse(_conv_module(c, k, size))
        assert winograd_convolutions(module, "auto", threads) == int(rewritten)
        assert module.operation.verify()


class _Stop(Exception):
    pass


def _copies_from_fresh_buffers(module) -> int:
    """The ``linalg.copy`` ops of ``module`` (bufferized) whose source is a ``memref.alloc``."""
    count = 0

    def visit(op):
        nonlocal count
        if op.name == "linalg.copy":
            source = op.operands[0]
            count += isinstance(source, ir.OpResult) and source.owner.name == "memref.alloc"
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


@pytest.mark.parametrize("threads,size", [(1, 16), (2, 16), (1, 32)])
def test_transforms_write_their_results_in_place(threads, size):
    """The 36 results of the input transform and the 16 of the output transform are
    written straight into the batch matmul's operand and the output's phases
    (``cpu/slice_copies.py``): after bufferization, no buffer is copied out of a
    fresh one (there were 52 such serial copies); over flat tiles (16x16 outputs) and rows
    of tiles (32x32)."""
    from dnnf_mlir.codegen.pipeline import lower

    seen = {}

    def dump(stage, module):
        if stage == "bufferize":
            seen["copies"] = _copies_from_fresh_buffers(module)
            raise _Stop()

    with make_context():
        module = ir.Module.parse(_conv_module(64, 64, size))
        assert winograd_convolutions(module, "always", threads) == 1
        with pytest.raises(_Stop):
            lower(module, "host", threads=threads, dump=dump)
    assert seen["copies"] == 0
