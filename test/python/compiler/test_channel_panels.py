"""Convolutions over few positions computed with vectors along the output channels,
``X_col^T @ W^T`` in panels (codegen/cpu/panels_pass.py, dnnf-channel-panels): which
layers take it on AVX-512 and AVX2, and the compiled results against float64 and
onnxruntime.

The model cases (1x1 and 3x3 windows, prime input channel counts, strides, a dilation,
7x7, 6x6, 5x5, 3x3, 2x2 and 1x1 outputs; a bias, a ReLU, a ReLU6, a residual add; 1x1
windows whose rows are the input's planes transposed, 3x3 ones whose input rows are
widened to whole vectors before it is made channels-last, windows copied tap by tap,
strided and dilated, or from the unpadded image made channels-last with zeros where
they read the padding, 1x1 ones of stride 2 sliced out of the input) are
branches of one model compiled once per CPU; the rule test below says which of them
are rewritten on each (several on each CPU, 3x3 ones included, so the numerical check
covers the rewrite; the 3x3 dilated one over 3x3 is a matmul over its patches on AVX-512). Inputs standard normal, filters scaled by 1/sqrt(C*KH*KW) so
outputs are O(1). Tolerance: 1e-5 + 1e-5 * |want| against float64 (sums of up to 1152
f32 products), and no more than 8 times onnxruntime's own error plus 1e-6.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.panels_pass import channel_panel_convolutions, panel_filters
from dnnf_mlir.codegen.target import get_target
from dnnf_mlir.context import make_context

RNG = np.random.default_rng(2929)
CPUS = ["native", "x86-64-v3"]

# (c, f, h, w, k, stride, dilation, pad, epilogue): the cases of the model.
CASES = [
    (144, 48, 6, 6, 1, 1, 1, 0, "residual_relu"),  # 36 positions: taken on AVX-512 only
    (131, 32, 2, 2, 1, 1, 1, 0, "clip"),  # a prime channel count, 4 positions: taken on both
    (200, 64, 1, 1, 1, 1, 1, 0, "bias"),  # one position (a classifier's 1x1 convolution)
    (130, 40, 7, 7, 1, 1, 1, 0, "bias"),  # 49 positions, 40 channels: left as it is
    (17, 32, 7, 7, 3, 1, 1, 1, "residual_relu"),  # 3x3 over 7x7, 153 taps: taken on AVX-512 only
    (37, 32, 13, 13, 3, 2, 1, 1, "relu"),  # 3x3 stride 2 to 7x7: taken on AVX-512 only
    (29, 32, 3, 3, 3, 1, 2, 2, "bias"),  # 3x3 dilated by 2 over 3x3: taken on both
    (24, 32, 7, 7, 3, 1, 1, 1, "relu"),  # rows of 9 widened to 16, then channels-last: AVX-512 only
    (32, 32, 13, 13, 3, 2, 1, 1, "residual_relu"),  # stride 2, rows of 15 widened to 16: AVX-512 only
    (160, 96, 3, 3, 1, 1, 1, 0, "clip"),  # MobileNetV2's 1x1 over 3x3: 9 rows, one register tile
    (137, 128, 1, 11, 1, 1, 1, 0, "residual_relu"),  # 11 positions (prime): one tile of 11 rows
    (131, 288, 3, 4, 1, 1, 1, 0, "bias"),  # 12 positions: one tile of 12 rows (24 accumulators)
    # Windows copied tap by tap from the input made channels-last:
    (32, 32, 7, 7, 3, 1, 2, 2, "relu"),  # dilated by 2 (taps 2 apart): AVX-512 only
    (48, 32, 9, 9, 3, 2, 1, 1, "bias"),  # stride 2 to 5x5 (25 positions, rows of 11): taken on both
    (128, 160, 28, 28, 3, 2, 1, 1, "relu"),  # Inception v2's 3x3/2 to 14x14: AVX-512 only
    # 1x1 windows of stride 2, their positions sliced out of the input first:
    (131, 512, 13, 13, 1, 2, 1, 0, "residual_relu"),  # to 7x7, a prime channel count: AVX-512 only
    (144, 512, 11, 11, 1, 2, 1, 1, "bias"),  # padded by 1, to 7x7 (the slice reads the pad): AVX-512 only
    (160, 96, 5, 5, 1, 2, 1, 0, "clip"),  # to 3x3, 9 rows in one tile: taken on both
    # Taps copied from the unpadded image made channels-last (planes of whole vectors),
    # zeros where they read the padding: AVX-512 only
    (64, 32, 12, 12, 3, 2, 1, 1, "bias"),  # stride 2 to 6x6
    (64, 32, 9, 16, 3, 2, 1, 1, "relu"),  # an odd height, stride 2 to 5x8
    (64, 64, 12, 12, 3, 1, 1, 1, "residual_relu"),  # stride 1
    (48, 32, 8, 16, 3, 2, 1, 0, "relu"),  # no padding
]


def _out_size(h, k, stride, dilation, pad):
    return (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def conv_module(c, f, h, w, k, stride, dilation, pad) -> str:
    filters = RNG.standard_normal((f, c, k, k)).astype(np.float32)
    oh, ow = _out_size(h, k, stride, dilation, pad), _out_size(w, k, stride, dilation, pad)
    hp, wp = h + 2 * pad, w + 2 * pad
    return f"""
func.func @conv(%x: tensor<1x{c}x{hp}x{wp}xf32>) -> tensor<1x{f}x{oh}x{ow}xf32> {{
  %w = arith.constant dense<"0x{filters.tobytes().hex()}"> : tensor<{f}x{c}x{k}x{k}xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x{f}x{oh}x{ow}xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x{f}x{oh}x{ow}xf32>) -> tensor<1x{f}x{oh}x{ow}xf32>
  %y = linalg.conv_2d_nchw_fchw
       {{dilations = dense<{dilation}> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
       ins(%x, %w : tensor<1x{c}x{hp}x{wp}xf32>, tensor<{f}x{c}x{k}x{k}xf32>)
       outs(%i : tensor<1x{f}x{oh}x{ow}xf32>) -> tensor<1x{f}x{oh}x{ow}xf32>
  return %y : tensor<1x{f}x{oh}x{ow}xf32>
}}"""


@pytest.mark.parametrize("cpu,case,rewritten", [
    ("skylake-avx512", CASES[0], True),
    ("x86-64-v3", CASES[0], False),  # 36 positions pad to 48 in tiles of 16: 1.14 times, under AVX2's 1.5
    ("skylake-avx512", CASES[1], True),
    ("x86-64-v3", CASES[1], True),
    ("skylake-avx512", CASES[2], True),
    ("x86-64-v3", CASES[2], True),
    ("skylake-avx512", CASES[3], False),  # 40 channels: not whole vectors of 16
    ("x86-64-v3", CASES[3], False),  # 1.09 times
    ("skylake-avx512", CASES[4], True),  # patches of 49 columns pad to 64: 1.20 times over them
    ("x86-64-v3", CASES[4], False),  # 1.16 times
    ("skylake-avx512", CASES[5], True),
    ("skylake-avx512", CASES[6], True),  # patches of 9 columns in one tile of 9 rows: 1.52 times
    ("x86-64-v3", CASES[6], True),  # patches of 9 columns on AVX2: 1.62 times
    ("skylake-avx512", CASES[7], True),  # patches of 49 columns pad to 64: 1.20 times over them
    ("skylake-avx512", CASES[8], True),
    ("skylake-avx512", CASES[9], True),  # 9 positions as one tile of 9 rows: 1.52 times (as 8 + 8 padded: 1.0)
    ("x86-64-v3", CASES[9], True),  # 1.64 times
    ("skylake-avx512", CASES[10], True),  # 11 rows in one tile: 1.29 times
    ("x86-64-v3", CASES[10], False),  # 1.26 times, under AVX2's 1.5
    ("skylake-avx512", CASES[11], True),  # 12 rows in one tile: 1.26 times
    ("skylake-avx512", CASES[12], True),
    ("x86-64-v3", CASES[12], False),
    ("skylake-avx512", CASES[13], True),
    ("x86-64-v3", CASES[13], True),
    ("skylake-avx512", CASES[14], True),
    ("x86-64-v3", CASES[14], False),
    ("skylake-avx512", CASES[15], True),  # 49 positions pad to 64: 1.27 times
    ("x86-64-v3", CASES[15], False),
    ("skylake-avx512", CASES[16], True),
    ("skylake-avx512", CASES[17], True),
    ("x86-64-v3", CASES[17], True),
    ("skylake-avx512", (64, 384, 6, 6, 1, 1, 1, 0, None), False),  # few input channels
    ("skylake-avx512", (576, 20, 6, 6, 1, 1, 1, 0, None), False),  # output channels not whole vectors
    ("skylake-avx512", (2048, 512, 7, 7, 1, 1, 1, 0, None), True),  # ResNet-50's last stage: 1.27 times
    ("skylake-avx512", (64, 512, 7, 7, 3, 1, 1, 1, None), True),  # 3x3 to 512 channels at 7x7, as its 3x3: 2.02 times
    ("skylake-avx512", (128, 32, 14, 14, 3, 1, 1, 1, None), False),  # DenseNet's 3x3 at 14x14: the copy, 1.02
    ("skylake-avx512", (1024, 256, 14, 14, 1, 1, 1, 0, None), False),  # ... its third: 1.14 times
    ("skylake-avx512", (128, 128, 56, 56, 3, 2, 1, 1, None), False),  # 3x3 stride 2 to 28x28: 1.14 times
    # Rows narrower than a vector, a matmul over their patches otherwise: over them the
    # panels must save 1.1 times (6x8, 8x8 and 4x4 outputs pad nothing: 1.0 times).
    ("skylake-avx512", (128, 32, 7, 7, 3, 1, 1, 1, None), True),  # DenseNet's 3x3 at 7x7: 1.20 times
    ("skylake-avx512", (64, 64, 6, 8, 3, 1, 1, 1, None), False),  # 6x8 outputs (YOLOv8's head)
    ("skylake-avx512", (32, 64, 16, 16, 2, 2, 1, 0, None), False),  # ConvNeXt's 2x2/2 downsampling to 8x8
    ("x86-64-v3", (64, 128, 8, 8, 2, 2, 1, 0, None), False),  # ... to 4x4, narrow on AVX2 too
])
def test_auto_mode_takes_the_layers_that_pad_much(cpu, case, rewritten):
    with make_context():
        module = ir.Module.parse(conv_module(*case[:8]))
        assert channel_panel_convolutions(module, get_target("host", cpu)) == int(rewritten)
        assert module.operation.verify()


def test_panel_filters_hold_each_panels_channels_in_window_order():
    filters = RNG.standard_normal((64, 5, 3, 2))
    panels = panel_filters(filters, 16)
    assert panels.shape == (4, 3 * 2 * 5, 16)
    for j, kh, kw, c, r in [(0, 0, 0, 0, 0), (3, 2, 1, 4, 15), (1, 1, 0, 3, 7)]:
        assert panels[j, (kh * 2 + kw) * 5 + c, r] == filters[j * 16 + r, c, kh, kw]


def _branch(index, c, f, h, w, k, stride, dilation, pad, epilogue):
    """Case ``index``: a Conv with bias and ``epilogue`` from ``x{index}`` to ``y{index}``;
    its graph inputs, nodes, initializers, feeds and float64 result."""
    x, y = f"x{index}", f"y{index}"
    weights = (RNG.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    feeds = {x: RNG.standard_normal((1, c, h, w)).astype(np.float32)}
    oh, ow = _out_size(h, k, stride, dilation, pad), _out_size(w, k, stride, dilation, pad)
    padded = np.pad(feeds[x].astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    want = np.zeros((1, f, oh, ow))
    for i in range(k):
        for j in range(k):
            window = padded[:, :, i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                            j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
            want += np.einsum("fc,nchw->nfhw", weights[:, :, i, j].astype(np.float64), window)
    want += bias[None, :, None, None]
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, h, w])]
    attributes = dict(kernel_shape=[k, k], strides=[stride] * 2, dilations=[dilation] * 2, pads=[pad] * 4)
    nodes = [helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [f"conv{index}" if epilogue != "bias" else y],
                              **attributes)]
    initializers = [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
    if epilogue == "residual_relu":
        feeds[f"r{index}"] = RNG.standard_normal(want.shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(f"r{index}", TensorProto.FLOAT, list(want.shape)))
        nodes += [helper.make_node("Add", [f"conv{index}", f"r{index}"], [f"sum{index}"]),
                  helper.make_node("Relu", [f"sum{index}"], [y])]
        want = np.maximum(want + feeds[f"r{index}"], 0)
    elif epilogue == "relu":
        nodes.append(helper.make_node("Relu", [f"conv{index}"], [y]))
        want = np.maximum(want, 0)
    elif epilogue == "clip":
        initializers += [numpy_helper.from_array(np.float32(0), f"lo{index}"),
                         numpy_helper.from_array(np.float32(6), f"hi{index}")]
        nodes.append(helper.make_node("Clip", [f"conv{index}", f"lo{index}", f"hi{index}"], [y]))
        want = np.clip(want, 0, 6)
    return inputs, nodes, initializers, feeds, want


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1)])
def test_convolutions_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, wants = branches_model([_branch(index, *case) for index, case in enumerate(CASES)], "panels")
    check_branches(model, feeds, CASES, wants, cpu, threads)


def branches_model(branches, name: str):
    """``(model, feeds, wants)`` of ``branches``, each ``(graph inputs, nodes,
    initializers, feeds, float64 result)`` of output ``y{index}``."""
    inputs, nodes, initializers, feeds, wants = [], [], [], {}, []
    for branch in branches:
        inputs += branch[0]
        nodes += branch[1]
        initializers += branch[2]
        feeds.update(branch[3])
        wants.append(branch[4])
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(branches))]
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, feeds, wants


def check_branches(model, feeds, cases, wants, cpu, threads):
    """``model`` compiled for ``cpu`` on ``threads``: output i (case ``cases[i]``) within
    1e-5 + 1e-5 * |want| of its float64 result ``wants[i]``, and no more than 8 times
    onnxruntime's own error plus 1e-6."""
    ort = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, feeds)
    for case, case_got, case_ort, want in zip(cases, got, ort, wants, strict=True):
        assert case_got.shape == want.shape, case
        np.testing.assert_allclose(case_got, want, rtol=1e-5, atol=1e-5, err_msg=str(case))
        assert np.abs(case_got - want).max() <= 8 * np.abs(case_ort - want).max() + 1e-6, case
