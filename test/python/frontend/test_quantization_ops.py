"""ONNX's quantization operators (frontend/quantization_converters.py, ecg/ops/quantization.py,
conversion/ecg_to_linalg/quantization.py), each a one-node model compiled for the host
and interpreted, against onnxruntime.

Tolerances: every op here is exact in onnxruntime's own arithmetic (integer
accumulation, one float division or multiplication, round half to even, saturation),
and dnnf computes it in the same order, so outputs must be equal, bit for bit; the
inputs hit rounding ties and both saturation limits, where a wrong rounding or a
wrap-around shows. The one exception is a quantized float graph (Conv -> Q -> DQ):
its float convolution sums in another order than onnxruntime's, which may move a
value across a rounding boundary: at most one quantization step.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir.frontend.onnx_importer import OnnxImportError, import_onnx
from dnnf_mlir.interpreter import interpret

RNG = np.random.default_rng(0)
ONNX_TYPES = {np.dtype(t): helper.np_dtype_to_tensor_dtype(np.dtype(t))
              for t in (np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32)}


def model(op_type, inputs: dict, constants: dict, outputs: list, opset=21, **attrs) -> onnx.ModelProto:
    """One ``op_type`` node; ``inputs`` are graph inputs, ``constants`` initializers, both name -> array
    (in the node's input order: inputs first, None for an omitted optional one)."""
    names = [name if value is not None else "" for name, value in {**inputs, **constants}.items()]
    node = helper.make_node(op_type, names, outputs, **attrs)
    graph = helper.make_graph(
        [node], "q",
        [helper.make_tensor_value_info(n, ONNX_TYPES[v.dtype], v.shape) for n, v in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in constants.items() if v is not None])
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return onnx.shape_inference.infer_shapes(result)


def ordered(op_type, arrays: dict, dynamic=("x",), **attrs):
    """The model of ``arrays`` (name -> array or None, in input order): ``dynamic`` ones fed."""
    inputs = {n: v for n, v in arrays.items() if n in dynamic}
    constants = {n: v for n, v in arrays.items() if n not in dynamic}
    names = list(arrays)
    assert names[:len(inputs)] == list(inputs), "graph inputs must come first"
    outputs = attrs.pop("outputs", ["y"])
    return model(op_type, inputs, constants, outputs, **attrs), inputs


def onnxruntime_outputs(onnx_model, feeds, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    session = ort.InferenceSession(onnx_model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def dnnf_outputs(onnx_model, feeds, tmp_path):
    session = dnnf_mlir.InferenceSession(onnx_model, cache_dir=tmp_path)
    return session.run(None, feeds)


def interpreted(onnx_model, feeds):
    return interpret(import_onnx(onnx_model), list(feeds.values()))


def check_exact(onnx_model, feeds, tmp_path):
    """Compiled and interpreted outputs equal onnxruntime's: same types, same bits."""
    expected = onnxruntime_outputs(onnx_model, feeds)
    for got in (dnnf_outputs(onnx_model, feeds, tmp_path), interpreted(onnx_model, feeds)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            g = np.asarray(g)
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_array_equal(g, e)


def with_ties(shape, scale=0.5, limit=400.0):
    """Floats that quantize to ties (k + 1/2 steps, exact in f32) and beyond the saturation limits."""
    x = RNG.uniform(-limit, limit, shape).astype(np.float32)
    flat = x.reshape(-1)
    ties = (RNG.integers(-300, 300, flat.size // 2) + 0.5) * scale
    flat[: ties.size] = ties
    flat[-2:] = [1e9, -1e9]
    return x


# ----- QuantizeLinear / DequantizeLinear -----


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16])
def test_quantize_per_tensor_ties_and_saturation(dtype, tmp_path):
    x = with_ties((4, 64), scale=0.5, limit=5e4 if np.dtype(dtype).itemsize == 2 else 400.0)
    zero_point = np.array(3 if dtype != np.int8 else -3, dtype)
    onnx_model, feeds = ordered("QuantizeLinear", {"x": x, "s": np.array(0.5, np.float32), "z": zero_point})
    check_exact(onnx_model, feeds, tmp_path)
    y = onnxruntime_outputs(onnx_model, feeds)[0]
    info = np.iinfo(dtype)
    assert y.min() == info.min and y.max() == info.max  # both limits hit
    # Half to even: 0.25 / 0.5 = 0.5 -> 0, 0.75 / 0.5 = 1.5 -> 2.
    assert set(np.unique((x.reshape(-1)[:128] / 0.5) % 2)) >= {0.5, 1.5}


def test_quantize_without_zero_point_is_uint8(tmp_path):
    onnx_model, feeds = ordered("QuantizeLinear", {"x": with_ties((3, 40)), "s": np.array(0.5, np.float32)}, opset=13)
    check_exact(onnx_model, feeds, tmp_path)


@pytest.mark.parametrize("axis", [1, -1, 0])
def test_quantize_per_axis(axis, tmp_path):
    x = with_ties((2, 3, 5, 4))
    size = x.shape[axis]
    scale = RNG.uniform(0.1, 2.0, size).astype(np.float32)
    scale[0] = 0.5
    zero_point = RNG.integers(-20, 20, size).astype(np.int8)
    onnx_model, feeds = ordered("QuantizeLinear", {"x": x, "s": scale, "z": zero_point}, axis=axis, opset=13)
    check_exact(onnx_model, feeds, tmp_path)


def test_quantize_blocked(tmp_path):
    x = with_ties((3, 10))
    scale = RNG.uniform(0.2, 1.0, (3, 3)).astype(np.float32)  # blocks of 4 along axis 1 (the last one of 2)
    zero_point = RNG.integers(100, 150, (3, 3)).astype(np.uint8)
    onnx_model, feeds = ordered("QuantizeLinear", {"x": x, "s": scale, "z": zero_point}, axis=1, block_size=4)
    check_exact(onnx_model, feeds, tmp_path)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32])
def test_dequantize_per_tensor(dtype, tmp_path):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (3, 50), endpoint=True).astype(dtype)
    x[0, :2] = info.min, info.max
    zero_point = np.array(0 if dtype == np.int32 else info.min // 2 + info.max // 3, dtype)
    onnx_model, feeds = ordered("DequantizeLinear", {"x": x, "s": np.array(0.037, np.float32), "z": zero_point})
    check_exact(onnx_model, feeds, tmp_path)


def test_dequantize_per_axis_without_zero_point(tmp_path):
    x = RNG.integers(-128, 128, (2, 6, 3, 3)).astype(np.int8)
    scale = RNG.uniform(0.01, 1.0, 6).astype(np.float32)
    onnx_model, feeds = ordered("DequantizeLinear", {"x": x, "s": scale}, axis=1, opset=13)
    check_exact(onnx_model, feeds, tmp_path)


def test_quantized_conv_graph_within_one_step(tmp_path):
    """Q -> DQ -> Conv -> Q -> DQ, as a QDQ model has it: the Q/DQ pairs fuse into the
    convolution's prologue and epilogue; onnxruntime without graph optimizations computes
    the same float graph; the float convolution's summation order may move a value by a step."""
    w = (RNG.standard_normal((8, 4, 3, 3)) * 0.2).astype(np.float32)
    scale, out_scale = np.array(0.02, np.float32), np.array(0.05, np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        helper.make_node("Conv", ["xd", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "so", "z"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "so", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 9, 9])],
        [numpy_helper.from_array(a, n) for n, a in
         (("w", w), ("s", scale), ("so", out_scale), ("z", np.array(128, np.uint8)))])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {"x": RNG.standard_normal((1, 4, 9, 9)).astype(np.float32)}
    (expected,) = onnxruntime_outputs(onnx_model, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    (got,) = dnnf_outputs(onnx_model, feeds, tmp_path)
    assert np.abs(got - expected).max() <= out_scale * 1.0001
    assert np.mean(got == expected) > 0.99  # all but a boundary case or two exact
    assert expected.max() > 10 * out_scale  # not all zeros


# ----- DynamicQuantizeLinear -----


@pytest.mark.parametrize("case", ["mixed", "positive", "negative", "zeros"])
def test_dynamic_quantize_linear(case, tmp_path):
    x = {"mixed": RNG.standard_normal((4, 33)) * 3, "positive": RNG.uniform(0.5, 2, (4, 33)),
         "negative": -RNG.uniform(0.5, 2, (4, 33)), "zeros": np.zeros((4, 33))}[case].astype(np.float32)
    onnx_model, feeds = ordered("DynamicQuantizeLinear", {"x": x}, outputs=["y", "scale", "zero_point"], opset=11)
    check_exact(onnx_model, feeds, tmp_path)


# ----- integer products and their requantized forms -----


@pytest.mark.parametrize("a_type,b_type", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
def test_matmul_integer(a_type, b_type, tmp_path):
    def ints(dtype, shape):
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)

    # 700 deep: sums beyond f32's exact integers (2**24), taken in chunks (3 for uint8 by uint8).
    a, b = ints(a_type, (2, 5, 700)), ints(b_type, (700, 7))
    arrays = {"a": a, "b": b, "az": np.array(7, a_type), "bz": ints(b_type, (7,))}
    onnx_model, feeds = ordered("MatMulInteger", arrays, dynamic=("a", "b"), opset=10)
    check_exact(onnx_model, feeds, tmp_path)


def test_matmul_integer_without_zero_points(tmp_path):
    arrays = {"a": RNG.integers(0, 256, (6, 30)).astype(np.uint8), "b": RNG.integers(-128, 128, (30, 5)).astype(np.int8)}
    onnx_model, feeds = ordered("MatMulInteger", arrays, dynamic=("a", "b"), opset=10)
    check_exact(onnx_model, feeds, tmp_path)


@pytest.mark.parametrize("channels", [6, 300])  # 300 * 9 taps of 255 * 255: the int32 convolution
@pytest.mark.parametrize("attrs", [{"pads": [1, 1, 1, 1]}, {"strides": [2, 2]}, {"pads": [0, 1, 2, 1], "dilations": [2, 1]}])
def test_conv_integer(attrs, channels, tmp_path):
    arrays = {"x": RNG.integers(0, 256, (1, channels, 9, 8)).astype(np.uint8),
              "w": RNG.integers(0, 256, (4, channels, 3, 3)).astype(np.uint8),
              "xz": np.array(131, np.uint8), "wz": np.array(120, np.uint8)}
    onnx_model, feeds = ordered("ConvInteger", arrays, opset=10, **attrs)
    check_exact(onnx_model, feeds, tmp_path)


@pytest.mark.parametrize("b_type", [np.uint8, np.int8])
def test_qlinear_matmul(b_type, tmp_path):
    info = np.iinfo(b_type)
    arrays = {
        "a": RNG.integers(0, 256, (3, 4, 64)).astype(np.uint8), "a_scale": np.array(0.02, np.float32),
        "a_zero": np.array(120, np.uint8), "b": RNG.integers(info.min, info.max, (64, 9)).astype(b_type),
        "b_scale": np.array(0.01, np.float32), "b_zero": np.array(info.max // 2, b_type),
        "y_scale": np.array(0.07, np.float32), "y_zero": np.array(128, np.uint8),
    }
    onnx_model, feeds = ordered("QLinearMatMul", arrays, dynamic=("a",), opset=10)
    check_exact(onnx_model, feeds, tmp_path)
    y = onnxruntime_outputs(onnx_model, feeds)[0]
    assert y.min() == 0 and y.max() == 255  # saturates at both ends


def test_qlinear_conv_per_channel_with_bias(tmp_path):
    arrays = {
        "x": RNG.integers(0, 256, (1, 8, 7, 7)).astype(np.uint8), "x_scale": np.array(0.03, np.float32),
        "x_zero": np.array(125, np.uint8), "w": RNG.integers(-127, 128, (6, 4, 3, 3)).astype(np.int8),
        "w_scale": RNG.uniform(0.001, 0.01, 6).astype(np.float32), "w_zero": np.zeros(6, np.int8),
        "y_scale": np.array(0.05, np.float32), "y_zero": np.array(100, np.uint8),
        "bias": RNG.integers(-3000, 3000, 6).astype(np.int32),
    }
    onnx_model, feeds = ordered("QLinearConv", arrays, opset=10, pads=[1, 1, 1, 1], group=2)
    check_exact(onnx_model, feeds, tmp_path)


# ----- what is refused -----


@pytest.mark.parametrize("arrays,attrs,message", [
    ({"x": np.ones((2, 4), np.float32), "s": np.ones(3, np.float32)}, {"axis": 1},
     "input 1 of shape [3] for data [2, 4] and axis 1 is not supported"),
    ({"x": np.ones((2, 8), np.float32), "s": np.ones((2, 3), np.float32)}, {"axis": 1, "block_size": 2},
     "a blocked parameter of shape [2, 3] (expected [2, 4] for block_size 2) is not supported"),
    ({"x": np.ones((2, 4), np.float32), "s": np.ones((), np.float32)}, {"output_dtype": TensorProto.INT64},
     "quantized element type i64 (int8, uint8, int16, uint16, int32 only) is not supported"),
])
def test_refused_with_the_node_named(arrays, attrs, message):
    onnx_model, _ = ordered("QuantizeLinear", arrays, **attrs)
    with pytest.raises(OnnxImportError) as error:
        import_onnx(onnx_model)
    assert str(error.value) == f"node 'QuantizeLinear_0' (ai.onnx::QuantizeLinear, opset 21): {message}"


def test_float4_refused():
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s"], ["y"])], "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT4E2M1, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(1.0, np.float32), "s")])
    with pytest.raises(OnnxImportError, match="FLOAT4E2M1 is not supported"):
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
