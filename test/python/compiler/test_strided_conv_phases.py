"""Convolutions of horizontal stride S > 1 computed as S convolutions of stride 1, one per
phase of the input columns, the phases copied by one transposing generic
(``convolutions.split_strided_convolutions`` with ``phase_split``; lit:
test/Codegen/strided-conv-phases.mlir), compiled whole against float64 and onnxruntime.

The cases are branches of one model compiled once per CPU (AVX-512 and AVX2) and thread
count: DeepLab's 3 -> 16 channel 3x3/2 first layer with HardSwish; a 7x7/2 first layer
on odd sizes; no padding with prime channel counts; asymmetric padding with strides
(1, 2); a 2x2/2 window (one tap per phase); stride 3 (three phases); a 1x3 window of
strides (1, 2); ShuffleNet's 3 -> 24 channel 3x3/2 first layer on a 224x224 image (rows of
[2, 113] phases, transposed whole: ``rows.MAX_WHOLE_TRANSPOSED_ROW``); ResNet-50's 128 -> 128
3x3/2 from 56x56 and the same from 72x72, whose register tiles go one output row at a
time (``tiles.conv_rows_outer``; lit: test/Codegen/conv-rows-outer.mlir), the latter's
last 4 of 36 columns a peeled tile. Every output is at
least 11 columns wide, so that none is a matmul over its patches instead
(``convolutions_to_matmul``). Inputs standard normal, filters
scaled by 1/sqrt(C*KH*KW) so outputs are O(1). Tolerance: 1e-5 + 1e-5 * |want| against
float64 (sums of up to 1152 f32 products), and no more than 8 times onnxruntime's own
error plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(2931)

# (c, f, h, w, (kh, kw), (sh, sw), (top, left, bottom, right) pads, epilogue)
CASES = [
    (3, 16, 90, 90, (3, 3), (2, 2), (1, 1, 1, 1), "HardSwish"),  # DeepLab's first layer
    (3, 8, 31, 33, (7, 7), (2, 2), (3, 3, 3, 3), "Relu"),  # a ResNet-style first layer, odd sizes
    (5, 16, 17, 23, (3, 3), (2, 2), (0, 0, 0, 0), None),  # no padding, prime channels
    (7, 16, 20, 29, (5, 5), (1, 2), (2, 1, 2, 2), "HardSwish"),  # asymmetric padding
    (13, 24, 15, 40, (2, 2), (2, 2), (0, 0, 0, 0), "Relu"),  # one tap per phase
    (3, 16, 19, 49, (3, 3), (3, 3), (1, 1, 1, 1), None),  # three phases
    (11, 32, 9, 70, (1, 3), (1, 2), (0, 1, 0, 1), "Relu"),  # a 1x3 window
    (3, 24, 224, 224, (3, 3), (2, 2), (1, 1, 1, 1), "Relu"),  # ShuffleNet's first layer
    (128, 128, 56, 56, (3, 3), (2, 2), (1, 1, 1, 1), "Relu"),  # ResNet-50's, its tiles rows outer
    (128, 128, 72, 72, (3, 3), (2, 2), (1, 1, 1, 1), None),  # rows outer, the last 4 columns peeled
]


def _float64(x, weights, bias, strides, pads, epilogue):
    """The convolution (with bias and ``epilogue``) in float64."""
    (sh, sw), (top, left, bottom, right) = strides, pads
    f, _, kh, kw = weights.shape
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (top, bottom), (left, right)])
    oh, ow = (padded.shape[2] - kh) // sh + 1, (padded.shape[3] - kw) // sw + 1
    want = np.zeros((1, f, oh, ow)) + bias.astype(np.float64)[None, :, None, None]
    for i in range(kh):
        for j in range(kw):
            window = padded[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            want += np.einsum("fc,nchw->nfhw", weights[:, :, i, j].astype(np.float64), window)
    if epilogue == "Relu":
        return np.maximum(want, 0)
    if epilogue == "HardSwish":
        return want * np.clip(want / 6 + 0.5, 0, 1)
    return want


def _model():
    """The model of ``CASES`` (one branch each), its feeds and the float64 results."""
    inputs, nodes, initializers, feeds, wants = [], [], [], {}, []
    for index, (c, f, h, w, kernel, strides, pads, epilogue) in enumerate(CASES):
        x, y = f"x{index}", f"y{index}"
        weights = (RNG.standard_normal((f, c, *kernel)) / np.sqrt(c * kernel[0] * kernel[1])).astype(np.float32)
        bias = RNG.standard_normal(f).astype(np.float32)
        feeds[x] = RNG.standard_normal((1, c, h, w)).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, h, w]))
        initializers += [numpy_helper.from_array(weights, f"w{index}"), numpy_helper.from_array(bias, f"b{index}")]
        conv = f"conv{index}" if epilogue else y
        nodes.append(helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [conv], kernel_shape=list(kernel),
                                      strides=list(strides), pads=[pads[0], pads[1], pads[2], pads[3]]))
        if epilogue:
            nodes.append(helper.make_node(epilogue, [conv], [y]))
        wants.append(_float64(feeds[x], weights, bias, strides, pads, epilogue))
    outputs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(CASES))]
    model = helper.make_model(helper.make_graph(nodes, "strided", inputs, outputs, initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, feeds, wants


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1)])
def test_strided_convolutions_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, wants = _model()
    check_branches(model, feeds, CASES, wants, cpu, threads)
