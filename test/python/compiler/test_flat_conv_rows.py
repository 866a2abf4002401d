"""Convolutions computed over flat rows of whole vectors (``flat_conv_rows``: KH
accumulated 1 x KW convolutions over the collapsed padded input, or for stride 2 over
its phase planes; lit: test/Codegen/flat-conv-rows.mlir, flat-conv-rows-strided.mlir),
compiled whole against float64 and onnxruntime.

The cases are branches of one model compiled once per CPU (AVX-512 and AVX2) and thread
count, each of a shape the rewrite takes: DenseNet's 3x3 128 -> 32 at 56x56 whose kernel
also writes the layer into the growing concat and the next layer's batch normalization +
ReLU of it, and at 14x14 with ReLU; 24 output channels (three register tiles of 8, split
among 2 threads by column tiles instead); a 5x5 window on a prime plane; asymmetric
padding; a 1x3 window; no padding (the extra zero rows are the only pad); a residual add
(not moved onto the flat rows: it varies over the image); a bias with ReLU; stride-2 ones:
ResNet-50's 3x3/2 128 -> 128 from 56x56 (812 columns: the last 12 a peeled tile, the
column tiles outer), 64 -> 16 from 40x40 (420: 4 peeled, channel blocks outer), an odd
padded size, asymmetric padding, a 2x2/2 window, even images written straight into the
planes (``image_phase_planes``: padding 1 or 2, top only) or padded first (left only), and
32 channels (which keep the column phases). Inputs standard
normal, filters scaled by 1/sqrt(C*KH*KW) so outputs are O(1). Tolerance: 1e-5 + 1e-5 *
|want| against float64 (sums of up to 1152 f32 products), and no more than 8 times
onnxruntime's own error plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(3229)

# (c, f, h, w, (kh, kw), (top, left, bottom, right) pads, epilogue, strides)
CASES = [
    (128, 32, 56, 56, (3, 3), (1, 1, 1, 1), "ConcatBnRelu", (1, 1)),  # DenseNet's dense layer
    (128, 32, 14, 14, (3, 3), (1, 1, 1, 1), "Relu", (1, 1)),
    (37, 24, 9, 10, (3, 3), (1, 1, 1, 1), "BiasRelu", (1, 1)),  # three channel tiles
    (5, 16, 13, 13, (5, 5), (2, 2, 2, 2), None, (1, 1)),  # prime plane, 5x5
    (7, 16, 11, 17, (3, 3), (0, 1, 2, 1), "BiasRelu", (1, 1)),  # asymmetric padding
    (3, 16, 9, 12, (1, 3), (0, 1, 0, 1), "Relu", (1, 1)),  # a 1x3 window
    (6, 16, 16, 16, (3, 3), (0, 0, 0, 0), None, (1, 1)),  # no padding
    (19, 16, 20, 20, (3, 3), (1, 1, 1, 1), "Add", (1, 1)),  # a residual add
    # Stride 2 over phase planes (AVX-512 only; the column phases on x86-64-v3):
    (128, 128, 56, 56, (3, 3), (1, 1, 1, 1), "BiasRelu", (2, 2)),  # ResNet-50's, columns outer, 12 peeled
    (64, 16, 40, 40, (3, 3), (1, 1, 1, 1), "Relu", (2, 2)),  # 4 columns peeled, channel blocks outer
    (64, 16, 27, 27, (3, 3), (1, 1, 1, 1), "Relu", (2, 2)),  # odd padded size: pad rounded up
    (67, 32, 29, 40, (3, 3), (0, 1, 1, 0), None, (2, 2)),  # asymmetric padding, not square
    (64, 16, 32, 32, (2, 2), (0, 0, 0, 0), None, (2, 2)),  # a 2x2/2 window, no padding
    # An even image written straight into the planes (image_phase_planes), or padded first:
    (64, 16, 30, 34, (3, 3), (1, 0, 0, 1), "BiasRelu", (2, 2)),  # top padding only: straight
    (64, 16, 30, 34, (3, 3), (0, 1, 1, 0), None, (2, 2)),  # left padding only: padded first
    (64, 24, 22, 26, (3, 3), (2, 2, 1, 2), "Relu", (2, 2)),  # even padding 2: straight
    (32, 16, 28, 28, (3, 3), (1, 1, 1, 1), None, (2, 2)),  # 32 channels: phases kept
]
OLD_CHANNELS = 64  # the concat's earlier channels in the DenseNet case


def _conv64(x, weights, pads, strides):
    """The convolution in float64."""
    top, left, bottom, right = pads
    (sh, sw), (f, _, kh, kw) = strides, weights.shape
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (top, bottom), (left, right)])
    oh, ow = (padded.shape[2] - kh) // sh + 1, (padded.shape[3] - kw) // sw + 1
    want = np.zeros((1, f, oh, ow))
    for i in range(kh):
        for j in range(kw):
            taps = padded[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            want += np.einsum("fc,nchw->nfhw", weights[:, :, i, j].astype(np.float64), taps)
    return want


def _case(index, case, feeds, inputs, initializers, nodes):
    """Build branch ``index`` (its feeds, inputs, initializers and nodes); returns its
    float64 result."""
    c, f, h, w, kernel, pads, epilogue, strides = case
    x, y = f"x{index}", f"y{index}"
    weights = (RNG.standard_normal((f, c, *kernel)) / np.sqrt(c * kernel[0] * kernel[1])).astype(np.float32)
    feeds[x] = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, h, w]))
    initializers.append(numpy_helper.from_array(weights, f"w{index}"))
    conv_inputs = [x, f"w{index}"]
    want = _conv64(feeds[x], weights, pads, strides)
    if epilogue == "BiasRelu":
        bias = RNG.standard_normal(f).astype(np.float32)
        initializers.append(numpy_helper.from_array(bias, f"b{index}"))
        conv_inputs.append(f"b{index}")
        want += bias.astype(np.float64)[None, :, None, None]
    conv = f"conv{index}" if epilogue else y
    nodes.append(helper.make_node("Conv", conv_inputs, [conv], kernel_shape=list(kernel),
                                  pads=[pads[0], pads[1], pads[2], pads[3]], strides=list(strides)))
    if epilogue in ("Relu", "BiasRelu"):
        nodes.append(helper.make_node("Relu", [conv], [y]))
        return np.maximum(want, 0)
    if epilogue == "Add":
        feeds[f"r{index}"] = RNG.standard_normal(want.shape).astype(np.float32)
        inputs.append(helper.make_tensor_value_info(f"r{index}", TensorProto.FLOAT, list(want.shape)))
        nodes.append(helper.make_node("Add", [conv, f"r{index}"], [y]))
        return want + feeds[f"r{index}"]
    if epilogue == "ConcatBnRelu":
        old = RNG.standard_normal((1, OLD_CHANNELS, *want.shape[2:])).astype(np.float32)
        feeds[f"old{index}"] = old
        inputs.append(helper.make_tensor_value_info(f"old{index}", TensorProto.FLOAT, list(old.shape)))
        total = OLD_CHANNELS + f
        scale, shift = RNG.uniform(0.5, 1.5, total), RNG.standard_normal(total)
        mean, var = RNG.standard_normal(total) * 0.1, RNG.uniform(0.5, 1.5, total)
        names = [f"{k}{index}" for k in ("scale", "shift", "mean", "var")]
        for name, value in zip(names, (scale, shift, mean, var)):
            initializers.append(numpy_helper.from_array(value.astype(np.float32), name))
        nodes.append(helper.make_node("Concat", [f"old{index}", conv], [f"cat{index}"], axis=1))
        nodes.append(helper.make_node("BatchNormalization", [f"cat{index}", *names], [f"bn{index}"]))
        nodes.append(helper.make_node("Relu", [f"bn{index}"], [y]))
        cat = np.concatenate([old.astype(np.float64), want], axis=1)
        per_channel = [v.astype(np.float32).astype(np.float64)[None, :, None, None] for v in (scale, shift, mean, var)]
        return np.maximum((cat - per_channel[2]) / np.sqrt(per_channel[3] + 1e-5) * per_channel[0] + per_channel[1], 0)
    return want


def _model():
    """The model of ``CASES`` (one branch each, output ``y<i>``), its feeds and the
    float64 results."""
    graph = helper.make_graph([], "flat_rows", [], [])
    feeds, inputs, initializers, nodes = {}, [], [], []
    wants = [_case(index, case, feeds, inputs, initializers, nodes) for index, case in enumerate(CASES)]
    graph.input.extend(inputs)
    graph.initializer.extend(initializers)
    graph.node.extend(nodes)
    graph.output.extend(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(CASES)))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, wants


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_flat_row_convolutions_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, wants = _model()
    check_branches(model, feeds, CASES, wants, cpu, threads)
