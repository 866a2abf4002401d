"""Single-image convolutions whose output rows are narrower than a vector, computed as
matmuls over their patches (im2col, ``convolutions_to_matmul`` in
codegen/cpu/convolutions.py): which layers take it on AVX-512 and AVX2, and one model
of many such layers compiled whole against onnxruntime.

The model's branches cover 3x3, 2x3 and 1x1 windows, strides, a dilation, groups and
ConvTransposes, each a set of phase convolutions in one kernel whose accumulator init,
and patches where two phases read one padded input, CSE shares. In the
``tconv_shared_patches`` layers the patches of phases (0, 0) and (1, 0) are one tensor
and those of phase (0, 1), of the same shape, are written into the same tensor.empty in
between: without buffer_reads.py the padded copy of phase (1, 0)'s matmul read the
patches of phase (0, 1) (25% of the outputs off by up to 1.6; six ConvTransposes in
one function off by 11). Inputs standard normal, weights scaled by 1/sqrt(fan-in) so
outputs are O(1). Tolerance: 1e-4 + 1e-4 * |onnxruntime| (sums of at most 144 f32
products).
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.convolutions import convolutions_to_matmul
from dnnf_mlir.codegen.linalg_queries import linalg_ops
from dnnf_mlir.codegen.target import get_target
from dnnf_mlir.context import make_context
from test_channel_panels import conv_module

RNG = np.random.default_rng(2930)


# (c, f, h, w, k, stride, dilation, pad) as test_channel_panels.conv_module takes them.
@pytest.mark.parametrize("cpu,case,rewritten", [
    ("x86-64-v4", (32, 48, 6, 8, 3, 2, 1, 1), True),  # 3x4 outputs (YOLOv8's head)
    ("x86-64-v3", (32, 48, 6, 8, 3, 2, 1, 1), True),  # 4 columns: half of AVX2's 8 lanes
    ("x86-64-v4", (16, 24, 6, 8, 3, 1, 2, 2), True),  # dilated, 6x8 outputs: 8 of 16 lanes
    ("x86-64-v3", (16, 24, 6, 8, 3, 1, 2, 2), False),  # 8 columns: whole AVX2 vectors
    ("x86-64-v4", (16, 24, 16, 16, 3, 1, 1, 1), False),  # 16 columns
    ("x86-64-v4", (16, 24, 16, 16, 1, 1, 1, 0), True),  # 1x1: always a matmul
    ("x86-64-v4", (2, 3, 5, 5, 2, 1, 1, 0), True),  # a ConvTranspose's phase: 4x4 outputs
])
def test_narrow_convolutions_are_matmuls(cpu, case, rewritten):
    with make_context():
        module = ir.Module.parse(conv_module(*case))
        assert convolutions_to_matmul(module, get_target("host", cpu)) == int(rewritten)
        assert module.operation.verify()
        names = {op.name for op in linalg_ops(module)}
        assert ("linalg.matmul" in names) == rewritten and ("linalg.conv_2d_nchw_fchw" in names) != rewritten


def _weights(*shape, fan_in):
    return (RNG.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


# (name, input, op, weight shape, attributes, bias): the model's layers.
INPUTS = {"x": (1, 16, 6, 8), "t": (1, 4, 5, 5), "s": (1, 4, 4, 4), "u": (1, 4, 3, 4)}
LAYERS = [
    ("conv3x3_s2", "x", "Conv", (24, 16, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1]), True),
    ("conv3x3_dilated", "x", "Conv", (24, 16, 3, 3), dict(dilations=[2, 2], pads=[2, 2, 2, 2]), True),
    ("conv2x3_s12", "x", "Conv", (20, 16, 2, 3), dict(strides=[1, 2]), False),
    ("conv_grouped", "x", "Conv", (24, 4, 3, 3), dict(group=4, strides=[2, 2], pads=[1, 1, 1, 1]), True),
    ("conv1x1_s2", "x", "Conv", (8, 16, 1, 1), dict(strides=[2, 2]), False),
    ("tconv_s23", "t", "ConvTranspose", (4, 3, 4, 3), dict(strides=[2, 3], pads=[1, 0, 2, 1], output_padding=[1, 0]), True),
    ("tconv_dilated", "t", "ConvTranspose", (4, 3, 3, 3), dict(dilations=[2, 2], strides=[1, 2]), False),
    ("tconv_s2", "s", "ConvTranspose", (4, 6, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]), True),
    ("tconv_grouped", "s", "ConvTranspose", (4, 2, 4, 4), dict(group=2, strides=[2, 2], pads=[1, 1, 1, 1]), False),
    # Phases (row, column) (0, 0) and (1, 0) read one padded input (patches computed once),
    # (0, 1) another, its patches written into the same tensor.empty in between.
    ("tconv_shared_patches", "t", "ConvTranspose", (4, 3, 2, 4), dict(strides=[2, 2], pads=[0, 1, 0, 1]), False),
    ("tconv_shared_patches_4", "u", "ConvTranspose", (4, 3, 2, 4), dict(strides=[2, 2], pads=[0, 1, 0, 1]), False),
]


def _model():
    """The model of ``LAYERS`` (an output per layer, ReLU after those with a bias), its
    feeds and its output names."""
    nodes, initializers, outputs = [], [], []
    for name, source, op, shape, attributes, bias in LAYERS:
        fan_in = int(np.prod(shape[1:])) if op == "Conv" else shape[0] * shape[2] * shape[3]
        initializers.append(numpy_helper.from_array(_weights(*shape, fan_in=fan_in), f"{name}_w"))
        operands = [source, f"{name}_w"]
        if bias:
            channels = shape[0] if op == "Conv" else shape[1] * attributes.get("group", 1)
            initializers.append(numpy_helper.from_array(RNG.standard_normal(channels).astype(np.float32), f"{name}_b"))
            operands.append(f"{name}_b")
        nodes.append(helper.make_node(op, operands, [f"{name}_raw" if bias else name], **attributes))
        if bias:
            nodes.append(helper.make_node("Relu", [f"{name}_raw"], [name]))
        outputs.append(name)
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in INPUTS.items()]
    graph = helper.make_graph(nodes, "narrow_convolutions", inputs,
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
                              initializers)
    feeds = {name: RNG.standard_normal(shape).astype(np.float32) for name, shape in INPUTS.items()}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds, outputs


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1)])
def test_narrow_convolutions_against_onnxruntime(cpu, threads):
    model, feeds, names = _model()
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, feeds)
    for name, g, w in zip(names, got, want, strict=True):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=name)
