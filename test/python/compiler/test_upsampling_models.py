"""Models that up-sample, built here with onnx.helper (random weights): a small UNet
(ConvTranspose up-sampling, skip connections concatenated) and a segmentation head
of the DeepLab kind (a dilated and a global-pooling branch, bilinear Resize back to
the input's size) with a nearest 2x up-sampling path of the YOLO kind. Each is
compiled for the host with dnnf fusion and checked against onnxruntime as
test_models checks the judged models (dnnf-run --check).

The torch exports among the extra models (gen_upsampling_models) are the real
architectures; these stay for what torch's exporter never writes, in a model's
fusion context: Resize at opset 19 with ``align_corners`` and with ONNX's default
nearest (half_pixel, round_prefer_floor; torch writes asymmetric and floor), a
nearest Resize feeding an Add, and a ConvTranspose with a ReLU epilogue.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_models import compile_and_check

OPSET = 19


class Graph:
    """Nodes and random weights of a model being built, with fresh names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.initializers, self.count = [], [], 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def constant(self, array) -> str:
        name = self.name("c")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: list, **attrs) -> str:
        output = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [output], **attrs))
        return output

    def conv(self, x: str, c: int, m: int, k: int = 3, relu: bool = True, transpose: bool = False, **attrs) -> str:
        """A Conv (or a ConvTranspose) with a bias, and a Relu."""
        group = attrs.get("group", 1)
        shape = (c, m // group, k, k) if transpose else (m, c // group, k, k)
        w = self.constant((self.rng.standard_normal(shape) / np.sqrt(c // group * k * k)).astype(np.float32))
        b = self.constant((0.1 * self.rng.standard_normal(m)).astype(np.float32))
        if not transpose and "pads" not in attrs:
            attrs["pads"] = [attrs.get("dilations", [1])[0] * (k // 2)] * 4
        y = self.node("ConvTranspose" if transpose else "Conv", [x, w, b], kernel_shape=[k, k], **attrs)
        return self.node("Relu", [y]) if relu else y

    def resize(self, x: str, scales, **attrs) -> str:
        return self.node("Resize", [x, "", self.constant(np.array(scales, np.float32))], **attrs)

    def model(self, inputs: dict, outputs: list) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, "upsampling",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
            [onnx.ValueInfoProto(name=o) for o in outputs], self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model = onnx.shape_inference.infer_shapes(model)  # the outputs' types
        onnx.checker.check_model(model, full_check=True)
        return model


def unet() -> onnx.ModelProto:
    """Two levels down (Conv, MaxPool), two up (ConvTranspose 2x2 stride 2, the skip
    concatenated, Conv), a 1x1 classifier."""
    g = Graph(0)
    e1 = g.conv(g.conv("x", 3, 8), 8, 8)
    e2 = g.conv(g.node("MaxPool", [e1], kernel_shape=[2, 2], strides=[2, 2]), 8, 16)
    bottom = g.conv(g.node("MaxPool", [e2], kernel_shape=[2, 2], strides=[2, 2]), 16, 32)
    u2 = g.conv(bottom, 32, 16, k=2, transpose=True, strides=[2, 2])
    d2 = g.conv(g.node("Concat", [u2, e2], axis=1), 32, 16)
    u1 = g.conv(d2, 16, 8, k=2, relu=False, transpose=True, strides=[2, 2])
    d1 = g.conv(g.node("Concat", [u1, e1], axis=1), 16, 8)
    return g.model({"x": [1, 3, 32, 32]}, [g.conv(d1, 8, 2, k=1, relu=False)])


def segmenter() -> onnx.ModelProto:
    """A strided backbone (a depthwise stage), an ASPP-like head (1x1, dilated 3x3 and
    image-pooling branches, the pooled one resized back), logits resized bilinearly
    to the input's size; a nearest 2x up-sampling of the features added to the
    earlier stage, as a detector's neck does."""
    g = Graph(1)
    s1 = g.conv("x", 3, 16, strides=[2, 2])
    s2 = g.conv(g.conv(s1, 16, 16, group=16), 16, 32, strides=[2, 2])
    pooled = g.conv(g.node("GlobalAveragePool", [s2]), 32, 16, k=1)
    branches = [g.conv(s2, 32, 16, k=1), g.conv(s2, 32, 16, dilations=[2, 2]),
                g.resize(pooled, [1, 1, 12, 12], mode="linear", coordinate_transformation_mode="align_corners")]
    head = g.conv(g.node("Concat", branches, axis=1), 48, 16, k=1)
    logits = g.conv(head, 16, 5, k=1, relu=False)
    mask = g.resize(logits, [1, 1, 4, 4], mode="linear", coordinate_transformation_mode="half_pixel")
    neck = g.node("Add", [g.resize(g.conv(s2, 32, 16, k=1), [1, 1, 2, 2], mode="nearest"), s1])
    return g.model({"x": [1, 3, 48, 48]}, [mask, neck])


@pytest.mark.parametrize("build", [unet, segmenter])
def test_upsampling_model_on_host(build, tmp_path):
    path = tmp_path / f"{build.__name__}.onnx"
    onnx.save(build(), path)
    compile_and_check(path, tmp_path / build.__name__, "host", "dnnf")
