"""1x1 convolutions over few positions computed as ``X^T W^T`` (codegen/cpu/pointwise_pass.py,
dnnf-transpose-pointwise): which layers take it on AVX-512 and AVX2, and the compiled
results against float64 and onnxruntime.

The model cases (odd and prime channel counts, 6x6, 2x2 and 1x1 outputs; a bias, a
ReLU6, a residual add) are branches of one model compiled once per CPU; the rule test
below says which of them are rewritten on each (at least one on each CPU, so the
numerical check covers the rewrite). Inputs standard normal, filters scaled by
1/sqrt(C) so outputs are O(1). Tolerance: 1e-5 + 1e-5 * |want| against float64 (sums of
up to 200 f32 products), and no more than 8 times onnxruntime's own error plus 1e-6.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.pointwise_pass import transpose_pointwise_convolutions
from dnnf_mlir.codegen.target import get_target
from dnnf_mlir.context import make_context

RNG = np.random.default_rng(2929)
CPUS = ["native", "x86-64-v3"]

# (c, f, h, w, epilogue): the cases of the model.
CASES = [
    (144, 48, 6, 6, "residual_relu"),  # 36 positions: taken on AVX-512 only
    (131, 32, 2, 2, "clip"),  # a prime channel count, 4 positions: taken on both
    (200, 64, 1, 1, "bias"),  # one position (a classifier's 1x1 convolution)
    (130, 40, 7, 7, "bias"),  # 49 positions: left as it is
]


def _conv_module(c: int, f: int, h: int, w: int) -> str:
    filters = RNG.standard_normal((f, c, 1, 1)).astype(np.float32)
    return f"""
func.func @conv(%x: tensor<1x{c}x{h}x{w}xf32>) -> tensor<1x{f}x{h}x{w}xf32> {{
  %w = arith.constant dense<"0x{filters.tobytes().hex()}"> : tensor<{f}x{c}x1x1xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x{f}x{h}x{w}xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x{f}x{h}x{w}xf32>) -> tensor<1x{f}x{h}x{w}xf32>
  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
       ins(%x, %w : tensor<1x{c}x{h}x{w}xf32>, tensor<{f}x{c}x1x1xf32>)
       outs(%i : tensor<1x{f}x{h}x{w}xf32>) -> tensor<1x{f}x{h}x{w}xf32>
  return %y : tensor<1x{f}x{h}x{w}xf32>
}}"""


@pytest.mark.parametrize("cpu,case,rewritten", [
    ("skylake-avx512", CASES[0], True),
    ("x86-64-v3", CASES[0], False),  # 36 positions pad to 48 in tiles of 16: 1.33 times
    ("skylake-avx512", CASES[1], True),
    ("x86-64-v3", CASES[1], True),
    ("skylake-avx512", CASES[2], True),
    ("x86-64-v3", CASES[2], True),
    ("skylake-avx512", CASES[3], False),
    ("x86-64-v3", CASES[3], False),
    ("skylake-avx512", (64, 384, 6, 6, None), False),  # few input channels
    ("skylake-avx512", (832, 128, 6, 6, None), False),  # 416 KiB of filters
    ("skylake-avx512", (576, 20, 6, 6, None), False),  # output channels not whole vectors
])
def test_auto_mode_takes_the_layers_that_pad_much(cpu, case, rewritten):
    c, f, h, w, _ = case
    with make_context():
        module = ir.Module.parse(_conv_module(c, f, h, w))
        assert transpose_pointwise_convolutions(module, get_target("host", cpu)) == int(rewritten)
        assert module.operation.verify()


def _branch(index, c, f, h, w, epilogue):
    """Case ``index``: a 1x1 Conv with bias and ``epilogue`` from ``x{index}`` to ``y{index}``;
    its graph inputs, nodes, initializers, feeds and float64 result."""
    x, y = f"x{index}", f"y{index}"
    weights = (RNG.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    feeds = {x: RNG.standard_normal((1, c, h, w)).astype(np.float32)}
    want = np.einsum("fc,nchw->nfhw", weights[:, :, 0, 0].astype(np.float64), feeds[x].astype(np.float64))
    want += bias[None, :, None, None]
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, h, w])]
    nodes = [helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [f"conv{index}" if epilogue != "bias" else y])]
    initializers = [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
    if epilogue == "residual_relu":
        feeds[f"r{index}"] = RNG.standard_normal(want.shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(f"r{index}", TensorProto.FLOAT, list(want.shape)))
        nodes += [helper.make_node("Add", [f"conv{index}", f"r{index}"], [f"sum{index}"]),
                  helper.make_node("Relu", [f"sum{index}"], [y])]
        want = np.maximum(want + feeds[f"r{index}"], 0)
    elif epilogue == "clip":
        initializers += [numpy_helper.from_array(np.float32(0), f"lo{index}"),
                         numpy_helper.from_array(np.float32(6), f"hi{index}")]
        nodes.append(helper.make_node("Clip", [f"conv{index}", f"lo{index}", f"hi{index}"], [y]))
        want = np.clip(want, 0, 6)
    return inputs, nodes, initializers, feeds, want


@pytest.mark.parametrize("cpu", CPUS)
def test_pointwise_convolutions_against_float64_and_onnxruntime(cpu):
    inputs, nodes, initializers, feeds, wants = [], [], [], {}, []
    for index, case in enumerate(CASES):
        branch = _branch(index, *case)
        inputs += branch[0]
        nodes += branch[1]
        initializers += branch[2]
        feeds.update(branch[3])
        wants.append(branch[4])
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(CASES))]
    model = helper.make_model(helper.make_graph(nodes, "pointwise", inputs, outputs, initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    ort = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = InferenceSession(model, use_cache=False, threads=1, cpu=cpu).run(None, feeds)
    for case, case_got, case_ort, want in zip(CASES, got, ort, wants, strict=True):
        assert case_got.shape == want.shape, case
        np.testing.assert_allclose(case_got, want, rtol=1e-5, atol=1e-5, err_msg=str(case))
        assert np.abs(case_got - want).max() <= 8 * np.abs(case_ort - want).max() + 1e-6, case
