"""DenseNet blocks compiled whole (``ecg-flatten-concats``: each layer's concat over the pieces,
not over the concat before it; lit: test/Transforms/ECGFlattenConcats), against float64 and
onnxruntime on AVX-512 and AVX2, 1 and 2 threads.

Each block: layers of batch normalization + ReLU, a 1x1 convolution, batch normalization +
ReLU, a 3x3 convolution whose channels are concatenated onto the block's, then a transition
(batch normalization + ReLU, 1x1 convolution, 2x2 average pool). Odd channel counts and
planes (rows of 11 and 7: vector tails); in one block a layer's concat is a model output
too (built whole as well as read piece by piece). Tolerance: 1e-5 + 1e-5 * |want| against
float64, and no more than 8 times onnxruntime's own error plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import check_branches

RNG = np.random.default_rng(2917)

# (first channels, growth, layers, h, w, the layer whose concat is an output too or None)
BLOCKS = [(13, 5, 4, 9, 11, None), (6, 3, 5, 7, 7, 2)]


class _Block:
    """Builds one block's ONNX nodes and its float64 result."""

    def __init__(self, index, initializers, nodes):
        self.index, self.initializers, self.nodes, self.count = index, initializers, nodes, 0

    def _name(self, kind):
        self.count += 1
        return f"b{self.index}_{kind}{self.count}"

    def _constant(self, array):
        name = self._name("c")
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name, array.astype(np.float32).astype(np.float64)

    def bn_relu(self, x, want):
        c = want.shape[1]
        params = [self._constant(v) for v in (RNG.uniform(0.5, 1.5, c), RNG.standard_normal(c) * 0.3,
                                              RNG.standard_normal(c) * 0.3, RNG.uniform(0.5, 1.5, c))]
        (scale, s), (shift, b), (mean, m), (var, v) = params
        bn, y = self._name("bn"), self._name("relu")
        self.nodes += [helper.make_node("BatchNormalization", [x, scale, shift, mean, var], [bn]),
                       helper.make_node("Relu", [bn], [y])]
        per = lambda a: a[None, :, None, None]  # noqa: E731
        return y, np.maximum((want - per(m)) / np.sqrt(per(v) + 1e-5) * per(s) + per(b), 0)

    def conv(self, x, want, out, k):
        cin, (h, w) = want.shape[1], want.shape[2:]
        name, weights = self._constant(RNG.standard_normal((out, cin, k, k)) / np.sqrt(cin * k * k))
        y = self._name("conv")
        self.nodes.append(helper.make_node("Conv", [x, name], [y], kernel_shape=[k, k], pads=[k // 2] * 4))
        padded = np.pad(want, [(0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)])
        return y, sum(np.einsum("fc,nchw->nfhw", weights[:, :, i, j], padded[:, :, i:i + h, j:j + w])
                      for i in range(k) for j in range(k))


def _block(index, block, feeds, inputs, initializers, nodes):
    """Block ``index``: its outputs' names and float64 results."""
    first, growth, layers, h, w, shown = block
    x = f"x{index}"
    feeds[x] = RNG.standard_normal((1, first, h, w)).astype(np.float32)
    inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, first, h, w]))
    b, outputs = _Block(index, initializers, nodes), []
    cat, cat_want = x, feeds[x].astype(np.float64)
    for layer in range(layers):
        y, y_want = b.conv(*b.bn_relu(cat, cat_want), 4 * growth, 1)
        y, y_want = b.conv(*b.bn_relu(y, y_want), growth, 3)
        name = f"b{index}_cat{layer}"
        nodes.append(helper.make_node("Concat", [cat, y], [name], axis=1))
        cat, cat_want = name, np.concatenate([cat_want, y_want], axis=1)
        if layer == shown:
            outputs.append((cat, cat_want))
    t, t_want = b.conv(*b.bn_relu(cat, cat_want), cat_want.shape[1] // 2, 1)
    nodes.append(helper.make_node("AveragePool", [t], [f"y{index}"], kernel_shape=[2, 2], strides=[2, 2]))
    n, c, th, tw = t_want.shape
    pooled = t_want[:, :, :th // 2 * 2, :tw // 2 * 2].reshape(n, c, th // 2, 2, tw // 2, 2).mean(axis=(3, 5))
    return outputs + [(f"y{index}", pooled)]


def _model():
    """The model of ``BLOCKS``, its feeds, the block of each output and the float64 results."""
    feeds, inputs, initializers, nodes, outputs, cases, wants = {}, [], [], [], [], [], []
    for index, block in enumerate(BLOCKS):
        for name, want in _block(index, block, feeds, inputs, initializers, nodes):
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
            cases.append(block)
            wants.append(want)
    graph = helper.make_graph(nodes, "dense_blocks", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, cases, wants


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_dense_blocks_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, cases, wants = _model()
    check_branches(model, feeds, cases, wants, cpu, threads)
