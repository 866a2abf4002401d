"""QDQ convolutions imported as QLinearConv (frontend/onnx_qdq.py), their byte conversions
kept out of the producing kernels on VNNI (fusion/constraints.py), and the results
against onnxruntime.

Tolerance: none. onnxruntime (ORT_ENABLE_ALL) runs a QDQ group as QLinearConv: integer
sums, one float multiply, round half to even, saturate; dnnf computes the same, on VNNI
from the bytes, elsewhere (x86-64-v3) by f32 convolutions of exact integers: the bytes
are equal. The chain's inputs are made so that the f32 QDQ arithmetic (onnxruntime with
optimizations off) rounds some bytes differently: the tests assert it does, so equality
with the optimized session says the integer form was taken. resnet_qdq (9 convolutions,
per-channel int8 weights, int32 biases, QDQ additions) is compared on every quantized
convolution's bytes, made graph outputs.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir.codegen.cpu.int8_matmuls import int8_matmuls
from dnnf_mlir.codegen.target import get_target
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.frontend.onnx_qdq import qdq_convolutions
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(29)


# Filter scales: a base times 1, 1/2 or 1/4 (per output channel), and y's scale 32 times
# x's times the base, exactly: onnxruntime's multipliers x_scale * w_scale / y_scale are
# 2^-5, 2^-6 and 2^-7 exactly, so some integer sums land on ties (round half to even),
# which the f32 QDQ arithmetic (x's and w's scales not powers of two) misses either way.
W_SCALE = np.float32(0.003)
W_SCALE_STEPS = np.float32([1, 0.5, 0.25])
MULTIPLIER = np.float32(2 ** -5)


def _conv_group(nodes, inits, x, y, x_params, channels, out_channels, name, relu=False, y_zero=0, bias_scale=None):
    """Append DQ(x) -> Conv(DQ(w), DQ(b)) -> [Relu] -> Q(y), x's (scale, zero point)
    ``x_params``; returns y's. The filters are small (-8 ... 8), so that y stays mostly
    within its bytes at these multipliers."""
    x_scale, x_zero = x_params
    w = RNG.integers(-8, 9, (out_channels, channels, 3, 3)).astype(np.int8)
    w_scale = W_SCALE * np.resize(W_SCALE_STEPS, out_channels)
    y_scale = np.float32(x_scale * W_SCALE) / MULTIPLIER
    b = RNG.integers(-2000, 2000, out_channels).astype(np.int32)
    arrays = {f"{name}_xs": x_scale, f"{name}_xz": x_zero, f"{name}_w": w, f"{name}_ws": w_scale,
              f"{name}_wz": np.zeros(out_channels, np.int8), f"{name}_b": b,
              f"{name}_bs": (x_scale * w_scale if bias_scale is None else bias_scale).astype(np.float32),
              f"{name}_bz": np.zeros(out_channels, np.int32), f"{name}_ys": np.array(y_scale, np.float32),
              f"{name}_yz": np.array(y_zero, np.uint8)}
    inits += [numpy_helper.from_array(np.asarray(v), k) for k, v in arrays.items()]
    nodes += [helper.make_node("DequantizeLinear", [x, f"{name}_xs", f"{name}_xz"], [f"{name}_xf"]),
              helper.make_node("DequantizeLinear", [f"{name}_w", f"{name}_ws", f"{name}_wz"], [f"{name}_wf"], axis=0),
              helper.make_node("DequantizeLinear", [f"{name}_b", f"{name}_bs", f"{name}_bz"], [f"{name}_bf"], axis=0),
              helper.make_node("Conv", [f"{name}_xf", f"{name}_wf", f"{name}_bf"], [f"{name}_conv"],
                               pads=[1, 1, 1, 1])]
    if relu:
        nodes.append(helper.make_node("Relu", [f"{name}_conv"], [f"{name}_relu"]))
    nodes.append(helper.make_node("QuantizeLinear", [f"{name}_relu" if relu else f"{name}_conv", f"{name}_ys",
                                                     f"{name}_yz"], [y]))
    return arrays[f"{name}_ys"], arrays[f"{name}_yz"]


def _chain(relu_zero=0, bias_scale=None, conv_output=False):
    """Two QDQ convolutions of u8 bytes (1x24x10x10 -> 32 -> 16 channels), a Relu before the
    first QuantizeLinear (y's zero point ``relu_zero``), the second group's bias scale
    ``bias_scale`` (None: x's times w's); ``conv_output``: the first Conv's f32 result is
    also a graph output."""
    nodes, inits = [], []
    y1 = _conv_group(nodes, inits, "x", "y1", (np.float32(0.1), np.uint8(128)), 24, 32, "c1", relu=True,
                     y_zero=relu_zero)
    _conv_group(nodes, inits, "y1", "y2", y1, 32, 16, "c2", y_zero=128, bias_scale=bias_scale)
    outputs = [helper.make_tensor_value_info("y2", TensorProto.UINT8, [1, 16, 10, 10])]
    if conv_output:
        outputs.append(helper.make_tensor_value_info("c1_conv", TensorProto.FLOAT, [1, 32, 10, 10]))
    graph = helper.make_graph(nodes, "qdq_chain", [helper.make_tensor_value_info("x", TensorProto.UINT8,
                                                                                 [1, 24, 10, 10])],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model, {"x": RNG.integers(0, 256, (1, 24, 10, 10)).astype(np.uint8)}


def _op_types(model):
    return [n.op_type for n in model.graph.node]


def test_groups_become_qlinear_convs_and_their_dequantizations_go():
    model, _ = _chain()
    rewritten = qdq_convolutions(model)
    assert _op_types(rewritten) == ["QLinearConv", "QLinearConv"]
    assert [n.op_type for n in model.graph.node].count("Conv") == 2  # the argument is left as it was
    onnx.checker.check_model(rewritten)


@pytest.mark.parametrize("build,kept", [
    (lambda: _chain(relu_zero=5), "the Relu clamps above y's zero point: onnxruntime keeps it"),
    (lambda: _chain(bias_scale=np.full(16, 0.001, np.float32)), "a bias whose scale is not x's times w's"),
    (lambda: _chain(conv_output=True), "a Conv result that a graph output reads too"),
])
def test_groups_that_stay_as_written(build, kept):
    model, _ = build()
    assert _op_types(qdq_convolutions(model)).count("Conv") == 1, kept


def test_models_without_groups_are_returned_as_they_are():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph)
    assert qdq_convolutions(model) is model


@pytest.mark.parametrize("cpu,taken", [("znver4", 2), ("x86-64-v3", 0)])
def test_byte_conversions_stay_kernels_of_their_own_on_vnni(cpu, taken):
    """On VNNI the second convolution reads the first's bytes through a conversion kernel
    of its own, which dnnf-int8-matmuls replaces; AVX2 keeps it in the first's epilogue."""
    model, _ = _chain()
    context = dnnf_mlir.make_context()
    with context:
        module = import_onnx(model, context=context)
        build_pass_manager(f"builtin.module(ecg-rewrite,ecg-fuse{{cpu={cpu}}},ecg-outline-kernels,"
                           "convert-ecg-to-linalg)", context).run(module.operation)
        functions = [op.name.value for op in module.body.operations if op.operation.name == "func.func"]
        assert sum("conv" in f for f in functions) == 2, functions
        assert sum(f.startswith("kernel") and "conv" not in f for f in functions) == (2 if cpu == "znver4" else 1)
        assert int8_matmuls(module, get_target("host", cpu)) == taken
        assert module.operation.verify()


def _onnxruntime(model, feeds, optimized: bool):
    options = ort.SessionOptions()
    level = ort.GraphOptimizationLevel
    options.graph_optimization_level = level.ORT_ENABLE_ALL if optimized else level.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("threads", [1, 2])
def test_chain_equals_onnxruntime_bit_for_bit(threads, tmp_path):
    model, feeds = _chain()
    want = _onnxruntime(model, feeds, optimized=True)[0]
    assert not np.array_equal(want, _onnxruntime(model, feeds, optimized=False)[0])  # f32 QDQ rounds otherwise
    got = dnnf_mlir.InferenceSession(model, cache_dir=tmp_path, threads=threads).run(None, feeds)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_resnet_qdq_convolutions_equal_onnxruntime_bit_for_bit(extra_models, tmp_path):
    model = onnx.load(extra_models["resnet_qdq"])
    convolved = {n.input[0] for n in model.graph.node if n.op_type == "Conv"}
    conv_results = {n.output[0] for n in model.graph.node if n.op_type == "Conv"}
    quantized = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] in conv_results]
    assert len(quantized) == 9 and convolved
    model.graph.output.extend(helper.make_tensor_value_info(name, TensorProto.UINT8, None) for name in quantized)
    session = dnnf_mlir.InferenceSession(model, cache_dir=tmp_path, threads=1)
    for _ in range(3):
        feeds = {"pixel_values": RNG.standard_normal((1, 3, 32, 32)).astype(np.float32)}
        want, got = _onnxruntime(model, feeds, optimized=True), session.run(None, feeds)
        for name, w, g in zip(["output", *quantized], want, got, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=name)
