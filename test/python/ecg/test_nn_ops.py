"""Many-to-Many ECG ops (ecg/ops/convolution.py, matmul.py, pooling.py, softmax.py,
reduction.py, normalization.py): reference semantics and shapes against
onnxruntime, verifier errors, and building the ops into MLIR."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import dnnf_mlir
from dnnf_mlir._mlir import MLIRError, func, ir
from dnnf_mlir.ecg import VerificationError
from dnnf_mlir.ecg.ops.convolution import ConvOp, ConvTransposeOp
from dnnf_mlir.ecg.ops.matmul import GemmOp, MatMulOp
from dnnf_mlir.ecg.ops.normalization import InstanceNormalizationOp, LayerNormalizationOp
from dnnf_mlir.ecg.ops.pooling import AveragePoolOp, GlobalAveragePoolOp, GlobalMaxPoolOp, LrnOp, MaxPoolOp
from dnnf_mlir.ecg.ops.reduction import (
    ArgMaxOp, ArgMinOp, ReduceL1Op, ReduceL2Op, ReduceLogSumExpOp, ReduceLogSumOp, ReduceMaxOp, ReduceMeanOp,
    ReduceMinOp, ReduceProdOp, ReduceSumOp, ReduceSumSquareOp,
)
from dnnf_mlir.ecg.ops.softmax import LogSoftmaxOp, SoftmaxOp
from dnnf_mlir.ecg.ops.windows import window_geometry
from dnnf_mlir.ecg.tensor_spec import TensorSpec, to_mlir

RNG = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ----- running one ONNX node in onnxruntime -----


def run_onnxruntime(op_type, inputs, attrs, *, opset=21, constants=None, n_outputs=1):
    """Run a one-node model; ``inputs`` are arrays or None (an omitted optional input),
    ``constants`` (name -> array) are appended as initializer inputs."""
    names, graph_inputs, feeds = [], [], {}
    for i, array in enumerate(inputs):
        if array is None:
            names.append("")
            continue
        name = f"in{i}"
        names.append(name)
        graph_inputs.append(
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        )
        feeds[name] = array
    initializers = []
    for name, value in (constants or {}).items():
        names.append(name)
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
    outputs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, **attrs)
    graph = helper.make_graph(
        [node], "g", graph_inputs, [onnx.ValueInfoProto(name=o) for o in outputs],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def run_ecg(cls, inputs, attrs):
    operands = [a for a in inputs if a is not None]
    specs = [TensorSpec.of(a) for a in operands]
    full = cls.complete_attrs(specs, attrs)
    results = cls.infer(specs, full)
    (y,) = cls.reference(operands, full, results)
    assert TensorSpec.of(y) == results[0], "reference result does not match the inferred type"
    assert cls.count_flops(specs, results, full) >= 0
    return y, results[0]


def check(cls, op_type, inputs, attrs=None, *, ecg_attrs=None, opset=21, constants=None, atol=1e-5, rtol=1e-4):
    """``cls.reference`` and ``cls.infer`` agree with onnxruntime on one node."""
    attrs = attrs or {}
    expected = run_onnxruntime(op_type, inputs, attrs, opset=opset, constants=constants)
    y, spec = run_ecg(cls, inputs, attrs if ecg_attrs is None else ecg_attrs)
    assert spec.shape == expected.shape, f"inferred {spec.shape}, onnxruntime gives {expected.shape}"
    assert y.dtype == expected.dtype
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(y, expected, atol=atol, rtol=rtol)
    else:
        np.testing.assert_array_equal(y, expected)


# ----- Conv -----

CONV_CASES = [
    # (input shape, weight shape, attrs, bias)
    ((1, 3, 8, 8), (4, 3, 3, 3), {}, False),
    ((2, 3, 9, 7), (4, 3, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}, True),
    ((1, 3, 9, 8), (4, 3, 3, 3), {"kernel_shape": [3, 3], "pads": [0, 1, 2, 0]}, False),
    ((1, 2, 9, 8), (4, 2, 3, 2), {"auto_pad": "SAME_UPPER", "strides": [2, 3]}, True),
    ((1, 2, 10, 7), (4, 2, 4, 4), {"auto_pad": "SAME_LOWER", "strides": [2, 2]}, False),
    ((1, 2, 10, 7), (4, 2, 4, 3), {"auto_pad": "SAME_UPPER"}, False),
    ((1, 2, 10, 7), (4, 2, 3, 3), {"auto_pad": "VALID", "strides": [2, 2]}, True),
    ((1, 3, 11, 11), (5, 3, 3, 3), {"dilations": [2, 3], "pads": [2, 1, 2, 3]}, True),
    ((2, 4, 7, 7), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, True),
    ((1, 8, 9, 9), (8, 1, 3, 3), {"group": 8, "strides": [2, 2], "pads": [1, 1, 1, 1]}, True),  # depthwise
    ((1, 8, 6, 6), (16, 8, 1, 1), {}, True),  # pointwise
    ((1, 8, 7, 7), (16, 8, 1, 1), {"strides": [2, 2]}, False),
    ((2, 3, 12), (4, 3, 3), {"pads": [2, 1], "strides": [2]}, True),  # 1-D
    ((1, 3, 10), (6, 1, 5), {"group": 3, "dilations": [2], "pads": [2, 3]}, False),
    ((1, 2, 5, 6, 7), (3, 2, 3, 2, 3), {"pads": [1, 0, 1, 1, 1, 0], "strides": [1, 2, 2]}, True),  # 3-D
]


@pytest.mark.parametrize("x_shape, w_shape, attrs, bias", CONV_CASES)
def test_conv(x_shape, w_shape, attrs, bias):
    inputs = [randn(*x_shape), randn(*w_shape)] + ([randn(w_shape[0])] if bias else [])
    check(ConvOp, "Conv", inputs, attrs)


@pytest.mark.parametrize(
    "x_shape, w_shape, attrs, pads",
    [
        # SAME pads (out-1)*stride + (k-1)*dilation + 1 - in; the odd one at the end for UPPER.
        ((1, 3, 11, 10), (5, 3, 3, 3), {"dilations": [2, 2], "auto_pad": "SAME_LOWER"}, [2, 2, 2, 2]),
        ((1, 3, 11, 10), (5, 3, 2, 3), {"dilations": [2, 3], "auto_pad": "SAME_UPPER"}, [1, 3, 1, 3]),
        ((1, 3, 11, 10), (5, 3, 2, 2), {"dilations": [3, 2], "auto_pad": "SAME_LOWER", "strides": [2, 2]}, [2, 1, 1, 1]),
    ],
)
def test_conv_same_with_dilations(x_shape, w_shape, attrs, pads):
    """onnxruntime rejects SAME_* with dilations: compare with its result for the spec's explicit pads."""
    inputs = [randn(*x_shape), randn(*w_shape)]
    explicit = {k: v for k, v in attrs.items() if k != "auto_pad"}
    expected = run_onnxruntime("Conv", inputs, {**explicit, "pads": pads})
    y, spec = run_ecg(ConvOp, inputs, attrs)
    assert spec.shape == expected.shape
    np.testing.assert_allclose(y, expected, atol=1e-5, rtol=1e-4)


def test_conv_float64():
    """onnxruntime has no float64 Conv: compare with the float32 result."""
    x, w = randn(1, 2, 6, 6, dtype=np.float64), randn(3, 2, 3, 3, dtype=np.float64)
    expected = run_onnxruntime("Conv", [x.astype(np.float32), w.astype(np.float32)], {"pads": [1] * 4})
    y, spec = run_ecg(ConvOp, [x, w], {"pads": [1] * 4})
    assert y.dtype == np.float64 and spec.shape == expected.shape
    np.testing.assert_allclose(y, expected, atol=1e-5, rtol=1e-4)


def test_conv_flops():
    specs = [TensorSpec((1, 64, 56, 56), np.float32), TensorSpec((64, 64, 3, 3), np.float32)]
    attrs = ConvOp.complete_attrs(specs, {"pads": [1, 1, 1, 1]})
    results = ConvOp.infer(specs, attrs)
    assert results[0].shape == (1, 64, 56, 56)
    assert ConvOp.count_flops(specs, results, attrs) == 2 * 64 * 56 * 56 * 64 * 9
    specs.append(TensorSpec((64,), np.float32))
    assert ConvOp.count_flops(specs, results, attrs) == 2 * 64 * 56 * 56 * 64 * 9 + 64 * 56 * 56
    grouped = [TensorSpec((1, 64, 56, 56), np.float32), TensorSpec((64, 1, 3, 3), np.float32)]
    attrs = ConvOp.complete_attrs(grouped, {"pads": [1, 1, 1, 1], "group": 64})
    assert ConvOp.count_flops(grouped, ConvOp.infer(grouped, attrs), attrs) == 2 * 64 * 56 * 56 * 9


# ----- ConvTranspose -----

CONV_TRANSPOSE_CASES = [
    ((1, 3, 5, 5), (3, 4, 3, 3), {}, False),
    ((2, 3, 5, 4), (3, 4, 3, 3), {"strides": [2, 2]}, True),
    ((1, 3, 5, 4), (3, 2, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, True),
    ((1, 3, 5, 4), (3, 2, 4, 3), {"strides": [2, 3], "pads": [1, 0, 2, 1], "output_padding": [1, 0]}, False),
    ((1, 4, 5, 5), (4, 3, 3, 3), {"group": 2, "strides": [2, 2]}, True),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"dilations": [2, 2], "strides": [1, 2]}, False),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": [2, 2], "output_shape": [10, 10]}, False),
    ((1, 2, 5, 5), (2, 3, 4, 4), {"strides": [2, 2], "output_shape": [11, 12]}, False),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": [2, 2], "output_shape": [9, 12]}, True),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": [2, 2], "output_shape": [10, 10], "auto_pad": "SAME_UPPER"}, False),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, False),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}, True),
    ((1, 2, 5, 5), (2, 3, 4, 4), {"strides": [3, 3], "auto_pad": "SAME_UPPER"}, False),
    ((1, 2, 5, 5), (2, 3, 3, 3), {"strides": [2, 2], "auto_pad": "VALID"}, False),
    ((2, 3, 7), (3, 2, 3), {"strides": [2], "pads": [1, 2]}, True),  # 1-D
    ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), {"strides": [2, 1, 2], "pads": [0, 1, 0, 1, 1, 0]}, True),  # 3-D
]


@pytest.mark.parametrize("x_shape, w_shape, attrs, bias", CONV_TRANSPOSE_CASES)
def test_conv_transpose(x_shape, w_shape, attrs, bias):
    features = w_shape[1] * attrs.get("group", 1)
    inputs = [randn(*x_shape), randn(*w_shape)] + ([randn(features)] if bias else [])
    check(ConvTransposeOp, "ConvTranspose", inputs, attrs)


# ----- Gemm / MatMul -----

GEMM_CASES = [
    ((3, 4), (4, 5), None, {}),
    ((4, 3), (4, 5), (5,), {"transA": 1}),
    ((3, 4), (5, 4), (3, 5), {"transB": 1, "alpha": 0.5, "beta": 2.0}),
    ((4, 3), (5, 4), (3, 1), {"transA": 1, "transB": 1, "alpha": -1.5}),
    ((3, 4), (4, 5), (1, 5), {"beta": 0.0}),
    ((3, 4), (4, 5), (), {"beta": 0.25}),
    ((1, 2048), (1000, 2048), (1000,), {"transB": 1}),
]


@pytest.mark.parametrize("a_shape, b_shape, c_shape, attrs", GEMM_CASES)
def test_gemm(a_shape, b_shape, c_shape, attrs):
    inputs = [randn(*a_shape), randn(*b_shape)] + ([] if c_shape is None else [randn(*c_shape)])
    check(GemmOp, "Gemm", inputs, attrs, atol=1e-4)


def test_gemm_without_c_in_opset11_with_beta():
    check(GemmOp, "Gemm", [randn(2, 3), randn(3, 4)], {"beta": 3.0}, opset=11)


MATMUL_CASES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((3, 2, 4), (2, 1, 4, 2)),
]


@pytest.mark.parametrize("a_shape, b_shape", MATMUL_CASES)
def test_mat_mul(a_shape, b_shape):
    check(MatMulOp, "MatMul", [randn(*a_shape), randn(*b_shape)], atol=1e-4)


def test_mat_mul_int():
    a = RNG.integers(-5, 5, (2, 3, 4)).astype(np.int32)
    b = RNG.integers(-5, 5, (4, 2)).astype(np.int32)
    check(MatMulOp, "MatMul", [a, b])


def test_matrix_flops():
    specs = [TensorSpec((2, 3, 4), np.float32), TensorSpec((4, 5), np.float32)]
    results = MatMulOp.infer(specs, {})
    assert MatMulOp.count_flops(specs, results, {}) == 2 * 2 * 3 * 5 * 4
    specs = [TensorSpec((4, 3), np.float32), TensorSpec((4, 5), np.float32)]
    attrs = GemmOp.complete_attrs(specs, {"transA": 1})
    assert GemmOp.count_flops(specs, GemmOp.infer(specs, attrs), attrs) == 2 * 3 * 5 * 4


# ----- pooling -----

POOL_CASES = [
    ((1, 3, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 7, 9), {"kernel_shape": [3, 2], "pads": [1, 0, 2, 1]}),
    ((1, 2, 6, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 7, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ((1, 2, 6, 6), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ((1, 2, 5, 5), {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [0, 0, 1, 1], "ceil_mode": 1}),
    ((1, 2, 8, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 8, 9), {"kernel_shape": [4, 4], "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 8, 9), {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "VALID"}),
    ((1, 2, 9, 9), {"kernel_shape": [2, 3], "dilations": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 10, 9), {"kernel_shape": [2, 2], "dilations": [2, 3], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 3, 4), {"kernel_shape": [40, 6], "strides": [40, 8], "dilations": [1, 2], "ceil_mode": 1}),  # window past input
    ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),  # 1-D
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1], "pads": [1, 1, 0, 0, 1, 1]}),  # 3-D
]


@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_max_pool(x_shape, attrs):
    check(MaxPoolOp, "MaxPool", [randn(*x_shape)], attrs)


def test_max_pool_storage_order_and_int8():
    x = RNG.integers(-128, 127, (1, 2, 7, 7)).astype(np.int8)
    check(MaxPoolOp, "MaxPool", [x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "storage_order": 1})
    x = RNG.integers(0, 255, (1, 2, 7, 7)).astype(np.uint8)
    check(MaxPoolOp, "MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1})


def test_max_pool_all_negative_with_padding():
    x = -np.abs(randn(1, 1, 4, 4)) - 1
    check(MaxPoolOp, "MaxPool", [x], {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]})


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_average_pool(x_shape, attrs, count_include_pad):
    check(AveragePoolOp, "AveragePool", [randn(*x_shape)], {**attrs, "count_include_pad": count_include_pad})


@pytest.mark.parametrize("x_shape", [(2, 3, 5, 6), (1, 4, 7), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("cls, op_type", [(GlobalAveragePoolOp, "GlobalAveragePool"), (GlobalMaxPoolOp, "GlobalMaxPool")])
def test_global_pool(cls, op_type, x_shape):
    check(cls, op_type, [randn(*x_shape)])


def test_pool_flops():
    specs = [TensorSpec((1, 64, 112, 112), np.float32)]
    attrs = MaxPoolOp.complete_attrs(specs, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    results = MaxPoolOp.infer(specs, attrs)
    assert results[0].shape == (1, 64, 56, 56)
    assert MaxPoolOp.count_flops(specs, results, attrs) == 64 * 56 * 56 * 9
    # EfficientNet's pooler, AvgPool2d(1280, ceil_mode=True) on 3x3: nine values a channel.
    specs = [TensorSpec((1, 1280, 3, 3), np.float32)]
    attrs = AveragePoolOp.complete_attrs(
        specs, {"kernel_shape": [1280, 1280], "strides": [1280, 1280], "ceil_mode": 1, "count_include_pad": 1})
    results = AveragePoolOp.infer(specs, attrs)
    assert results[0].shape == (1, 1280, 1, 1)
    assert AveragePoolOp.count_flops(specs, results, attrs) == 1280 * 9


def _random_window_attrs(rng, spatial, pool):
    kernel = [int(rng.integers(1, 5)) for _ in range(spatial)]
    attrs = {"kernel_shape": kernel, "strides": [int(rng.integers(1, 4)) for _ in range(spatial)]}
    auto_pad = str(rng.choice(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if auto_pad == "NOTSET":
        if rng.random() < 0.5:
            attrs["dilations"] = [int(rng.integers(1, 3)) for _ in range(spatial)]
        attrs["pads"] = [int(rng.integers(0, k)) for k in kernel] + [int(rng.integers(0, k)) for k in kernel]
    else:
        attrs["auto_pad"] = auto_pad
        # Strides above the kernel make ONNX Runtime's SAME pads negative (MaxPool fails,
        # AveragePool shifts its windows); ONNX leaves that undefined and ECG pads 0.
        attrs["strides"] = [min(s, k) for s, k in zip(attrs["strides"], kernel)]
    if pool and rng.random() < 0.5:
        attrs["ceil_mode"] = 1
    return attrs


def onnx_inferred_shape(op_type, inputs, attrs, opset=21):
    """The output shape ONNX shape inference gives a one-node model."""
    names = [f"in{i}" for i in range(len(inputs))]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, ["out"], **attrs)], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in zip(names, inputs)],
        [onnx.ValueInfoProto(name="out")],
    )
    model = onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), strict_mode=True
    )
    return tuple(d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim)


@pytest.mark.parametrize(
    "op_type, x_shape, attrs, pads",
    [
        ("MaxPool", (1, 2, 7, 6), {"kernel_shape": [4, 4], "strides": [3, 3], "dilations": [1, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 2, 2]),
        ("MaxPool", (1, 2, 5), {"kernel_shape": [4], "dilations": [2], "auto_pad": "SAME_LOWER"}, [3, 3]),
        ("AveragePool", (1, 2, 8), {"kernel_shape": [3], "strides": [3], "dilations": [2], "auto_pad": "SAME_LOWER"}, [2, 1]),
        ("AveragePool", (1, 2, 8, 9), {"kernel_shape": [3, 3], "strides": [2, 1], "dilations": [2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 2, 2]),
    ],
)
def test_pool_same_with_dilations(op_type, x_shape, attrs, pads):
    """ONNX Runtime pads SAME pools for the undilated kernel, contradicting ONNX shape
    inference; ECG follows the spec: (out-1)*stride + (kernel-1)*dilation + 1 - in, the
    odd one at the end for UPPER. Compare shapes with ONNX shape inference and values
    with onnxruntime for those explicit pads."""
    x = randn(*x_shape)
    begins, ends, _ = window_geometry(
        x_shape[2:], attrs["kernel_shape"], attrs["strides"] if "strides" in attrs else [1] * (len(x_shape) - 2),
        attrs["dilations"], [], attrs["auto_pad"],
    )
    assert begins + ends == pads
    cls = MaxPoolOp if op_type == "MaxPool" else AveragePoolOp
    y, spec = run_ecg(cls, [x], attrs)
    assert spec.shape == onnx_inferred_shape(op_type, [x], attrs)
    explicit = {k: v for k, v in attrs.items() if k != "auto_pad"}
    expected = run_onnxruntime(op_type, [x], {**explicit, "pads": pads})
    np.testing.assert_allclose(y, expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(
    "x_shape, w_shape, attrs",
    [
        ((1, 2, 4), (2, 3, 1), {"strides": [3], "auto_pad": "SAME_UPPER"}),
        ((1, 2, 3, 5), (2, 3, 2, 2), {"strides": [3, 2], "auto_pad": "SAME_LOWER"}),
    ],
)
def test_conv_transpose_same_beyond_full_size(x_shape, w_shape, attrs):
    """SAME where in*stride exceeds the full size: no padding, the full size (ONNX shape
    inference and onnxruntime agree)."""
    x, w = randn(*x_shape), randn(*w_shape)
    assert run_ecg(ConvTransposeOp, [x, w], attrs)[1].shape == onnx_inferred_shape("ConvTranspose", [x, w], attrs)
    check(ConvTransposeOp, "ConvTranspose", [x, w], attrs)


@pytest.mark.parametrize("seed", range(8))
def test_windowed_ops_random(seed):
    """Random kernels, strides, dilations and paddings against onnxruntime."""
    rng = np.random.default_rng(seed)
    checked = 0
    while checked < 12:
        spatial = int(rng.integers(1, 4))
        op_type = str(rng.choice(["Conv", "MaxPool", "AveragePool"]))
        attrs = _random_window_attrs(rng, spatial, op_type != "Conv")
        x = rng.standard_normal([2, 4] + [int(rng.integers(4, 10)) for _ in range(spatial)]).astype(np.float32)
        inputs = [x]
        if op_type == "Conv":
            group = int(rng.choice([1, 2, 4]))
            attrs["group"] = group
            inputs.append(rng.standard_normal([4, 4 // group] + attrs["kernel_shape"]).astype(np.float32))
        elif op_type == "AveragePool":
            attrs["count_include_pad"] = int(rng.integers(0, 2))
        cls = {"Conv": ConvOp, "MaxPool": MaxPoolOp, "AveragePool": AveragePoolOp}[op_type]
        try:
            full = cls.complete_attrs([TensorSpec.of(a) for a in inputs], attrs)
            cls.infer([TensorSpec.of(a) for a in inputs], full)
        except VerificationError:
            continue  # e.g. a window larger than the padded input
        check(cls, op_type, inputs, attrs)
        checked += 1


@pytest.mark.parametrize("seed", range(4))
def test_conv_transpose_random(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(12):
        spatial = int(rng.integers(1, 4))
        kernel = [int(rng.integers(1, 5)) for _ in range(spatial)]
        strides = [int(rng.integers(1, 4)) for _ in range(spatial)]
        attrs = {"strides": strides, "group": int(rng.choice([1, 2]))}
        if rng.random() < 0.5:
            attrs["dilations"] = [int(rng.integers(1, 3)) for _ in range(spatial)]
        if rng.random() < 0.5:
            attrs["output_padding"] = [int(rng.integers(0, s)) for s in strides]
        attrs["pads"] = [int(rng.integers(0, k)) for k in kernel] + [int(rng.integers(0, k)) for k in kernel]
        x = rng.standard_normal([1, 4] + [int(rng.integers(2, 7)) for _ in range(spatial)]).astype(np.float32)
        w = rng.standard_normal([4, 3] + kernel).astype(np.float32)
        inputs = [x, w, rng.standard_normal(3 * attrs["group"]).astype(np.float32)]
        try:
            specs = [TensorSpec.of(a) for a in inputs]
            ConvTransposeOp.infer(specs, ConvTransposeOp.complete_attrs(specs, attrs))
        except VerificationError:
            continue
        check(ConvTransposeOp, "ConvTranspose", inputs, attrs, atol=1e-4)


@pytest.mark.parametrize(
    "attrs", [{"size": 3}, {"size": 5, "alpha": 0.001, "beta": 0.5, "bias": 2.0}, {"size": 1}, {"size": 9, "alpha": 0.1}]
)
def test_lrn(attrs):
    check(LrnOp, "LRN", [randn(2, 7, 4, 5)], attrs)


@pytest.mark.parametrize("size", [2, 4])
def test_lrn_even_size(size):
    """onnxruntime only takes odd sizes (and the ONNX reference evaluator sums over the
    wrong axis): compare with a loop over the spec's formula."""
    x = randn(2, 6, 3, 3)
    alpha, beta, bias = 0.01, 0.75, 1.0
    expected = np.empty_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1] - 1, c + -(-(size - 1) // 2))
        square_sum = np.sum(x[:, lo : hi + 1] ** 2, axis=1)
        expected[:, c] = x[:, c] / (bias + alpha / size * square_sum) ** beta
    y, _ = run_ecg(LrnOp, [x], {"size": size, "alpha": alpha})
    np.testing.assert_allclose(y, expected, atol=1e-5, rtol=1e-4)


# ----- softmax -----


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
@pytest.mark.parametrize("cls, op_type", [(SoftmaxOp, "Softmax"), (LogSoftmaxOp, "LogSoftmax")])
def test_softmax(cls, op_type, axis):
    attrs = {} if axis is None else {"axis": axis}
    check(cls, op_type, [randn(3, 4, 5) * 5], attrs, opset=13)


# ----- reductions -----

REDUCTIONS = [
    (ReduceSumOp, "ReduceSum"),
    (ReduceMeanOp, "ReduceMean"),
    (ReduceMaxOp, "ReduceMax"),
    (ReduceMinOp, "ReduceMin"),
    (ReduceProdOp, "ReduceProd"),
    (ReduceL1Op, "ReduceL1"),
    (ReduceL2Op, "ReduceL2"),
    (ReduceSumSquareOp, "ReduceSumSquare"),
    (ReduceLogSumOp, "ReduceLogSum"),
    (ReduceLogSumExpOp, "ReduceLogSumExp"),
]
REDUCE_ATTRS = [
    ([], 1, 0),
    ([], 0, 0),
    ([1], 1, 0),
    ([0, 2], 0, 0),
    ([-1], 0, 0),
    ([-3, 1], 1, 0),
    ([], 1, 1),
]


@pytest.mark.parametrize("axes, keepdims, noop", REDUCE_ATTRS)
@pytest.mark.parametrize("cls, op_type", REDUCTIONS)
def test_reduce(cls, op_type, axes, keepdims, noop):
    x = randn(3, 4, 5)
    if op_type == "ReduceLogSum":
        x = np.abs(x) + 0.1
    if op_type == "ReduceProd":
        x = (x / 4 + 1).astype(np.float32)
    onnx_attrs = {"keepdims": keepdims, "noop_with_empty_axes": noop}
    constants = {"axes": np.array(axes, dtype=np.int64)} if axes else None
    check(
        cls, op_type, [x], onnx_attrs, ecg_attrs={**onnx_attrs, "axes": axes}, opset=18, constants=constants
    )


@pytest.mark.parametrize("cls, op_type", [(ReduceMeanOp, "ReduceMean"), (ReduceMaxOp, "ReduceMax")])
def test_reduce_opset13_attribute_axes(cls, op_type):
    attrs = {"axes": [2, 3], "keepdims": 1}
    check(cls, op_type, [randn(2, 3, 4, 5)], attrs, opset=13)


@pytest.mark.parametrize(
    "cls, op_type", [(ReduceSumOp, "ReduceSum"), (ReduceMaxOp, "ReduceMax"), (ReduceMinOp, "ReduceMin")]
)
def test_reduce_int(cls, op_type):
    x = RNG.integers(-100, 100, (3, 4, 5)).astype(np.int64)
    check(cls, op_type, [x], {"keepdims": 0}, ecg_attrs={"keepdims": 0, "axes": [1]}, opset=18,
          constants={"axes": np.array([1], np.int64)})


def test_reduce_flops():
    specs = [TensorSpec((3, 4, 5), np.float32)]
    attrs = ReduceSumOp.complete_attrs(specs, {"axes": [1]})
    assert ReduceSumOp.count_flops(specs, ReduceSumOp.infer(specs, attrs), attrs) == 60


@pytest.mark.parametrize("axis, keepdims, last", [(0, 1, 0), (1, 0, 0), (-1, 1, 1), (2, 0, 1), (1, 1, 1)])
@pytest.mark.parametrize("cls, op_type", [(ArgMaxOp, "ArgMax"), (ArgMinOp, "ArgMin")])
def test_arg_reduce(cls, op_type, axis, keepdims, last):
    x = RNG.integers(0, 3, (3, 4, 5)).astype(np.float32)  # many ties
    check(cls, op_type, [x], {"axis": axis, "keepdims": keepdims, "select_last_index": last})


def test_arg_max_defaults():
    check(ArgMaxOp, "ArgMax", [randn(3, 4)])


# ----- normalizations -----


@pytest.mark.parametrize(
    "x_shape, axis, scale_shape, bias",
    [
        ((2, 3, 8), None, (8,), True),
        ((2, 3, 8), -1, (8,), False),
        ((2, 3, 4, 5), 2, (4, 5), True),
        ((2, 3, 4, 5), 1, (3, 4, 5), True),
        ((2, 3, 4, 5), -2, (1, 5), True),
    ],
)
def test_layer_normalization(x_shape, axis, scale_shape, bias):
    attrs = {"epsilon": 1e-3} if axis is None else {"axis": axis}
    inputs = [randn(*x_shape), randn(*scale_shape)] + ([randn(*scale_shape)] if bias else [])
    check(LayerNormalizationOp, "LayerNormalization", inputs, attrs, opset=17)


@pytest.mark.parametrize("x_shape, attrs", [((2, 3, 5, 4), {}), ((1, 4, 7), {"epsilon": 1e-2}), ((2, 2, 3, 2, 4), {})])
def test_instance_normalization(x_shape, attrs):
    c = x_shape[1]
    check(InstanceNormalizationOp, "InstanceNormalization", [randn(*x_shape), randn(c), randn(c)], attrs)


# ----- verifier errors -----

F32 = np.float32


def spec(*shape, dtype=F32):
    return TensorSpec(shape, dtype)


ERROR_CASES = [
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 2, 3, 3)], {}, "input channels 3 must equal weight channels 2 * group 1"),
    (ConvOp, [spec(1, 4, 8, 8), spec(6, 1, 3, 3)], {"group": 2}, "input channels 4 must equal weight channels 1 * group 2"),
    (ConvOp, [spec(1, 4, 8, 8), spec(5, 2, 3, 3)], {"group": 2}, "output channels 5 must be divisible by group 2"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3)], {}, "weight must have the input's rank 4"),
    (ConvOp, [spec(3, 8), spec(4, 3)], {}, "input must have rank >= 3"),
    (ConvOp, [spec(1, 3, 2, 8), spec(4, 3, 3, 3)], {}, "smaller than the window extent 3"),
    (ConvOp, [spec(1, 3, 5, 8), spec(4, 3, 3, 3)], {"dilations": [3, 1]}, "smaller than the window extent 7"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"auto_pad": "SAME"}, "auto_pad must be one of"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"strides": [1]}, "strides [1] must have 2 entries"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"strides": [0, 1]}, "strides [0, 1] must be positive"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"pads": [1, 1]}, "pads [1, 1] must have 4 entries"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"pads": [-1, 0, 0, 0]}, "must not be negative"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"kernel_shape": [2, 2]}, "does not match the weight's spatial shape"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3), spec(3)], {}, "bias must have shape (4,)"),
    (ConvOp, [spec(1, 3, 8, 8, dtype=np.int64), spec(4, 3, 3, 3, dtype=np.int64)], {}, "float or int32"),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3, dtype=np.float64)], {}, "one element type"),
    (ConvTransposeOp, [spec(1, 3, 5, 5), spec(4, 2, 3, 3)], {}, "must equal the weight's first dimension 4"),
    (ConvTransposeOp, [spec(1, 3, 5, 5), spec(3, 2, 3, 3)], {"output_padding": [2, 0]}, "below the stride"),
    (ConvTransposeOp, [spec(1, 3, 5, 5), spec(3, 2, 3, 3)], {"output_shape": [1, 2, 3]}, "output_shape [1, 2, 3] must be empty or have 2 entries"),
    (ConvTransposeOp, [spec(1, 3, 5, 5), spec(3, 2, 3, 3)], {"output_shape": [1, 2, 9, 9]}, "must be empty or have 2"),
    (GemmOp, [spec(3, 4), spec(5, 6)], {}, "inner dimensions do not match"),
    (GemmOp, [spec(3, 4), spec(4, 6), spec(4, 6)], {}, "must broadcast to the result shape (3, 6)"),
    (GemmOp, [spec(2, 3, 4), spec(4, 6)], {}, "A must have rank 2"),
    (MatMulOp, [spec(3, 4), spec(5, 6)], {}, "inner dimensions do not match"),
    (MatMulOp, [spec(2, 3, 4), spec(3, 4, 6)], {}, "do not broadcast"),
    (MatMulOp, [spec(3, 4), spec(4, 6, dtype=np.float64)], {}, "one element type"),
    (MaxPoolOp, [spec(1, 3, 8, 8)], {}, "requires attribute kernel_shape"),
    (MaxPoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [3]}, "kernel_shape [3] must have 2 entries"),
    (MaxPoolOp, [spec(1, 3, 2, 8)], {"kernel_shape": [3, 3]}, "smaller than the window extent 3"),
    (MaxPoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [3, 3], "storage_order": 2}, "storage_order must be 0 or 1"),
    (MaxPoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [3, 3], "ceil_mode": 3}, "ceil_mode must be 0 or 1"),
    (AveragePoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [2, 2], "pads": [0, 0, 2, 0]}, "must be smaller than kernel_shape"),
    (AveragePoolOp, [spec(1, 3, 8, 8, dtype=np.int32)], {"kernel_shape": [3, 3]}, "must not have element type i32"),
    (AveragePoolOp, [spec(8, 8)], {"kernel_shape": [3, 3]}, "input must have rank >= 3"),
    (MaxPoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [3, 3], "foo": 1}, "has no attribute foo"),
    (GlobalAveragePoolOp, [spec(3, 4)], {}, "input must have rank >= 3"),
    (LrnOp, [spec(1, 3, 4, 4)], {"size": 0}, "size must be positive"),
    (SoftmaxOp, [spec(3, 4)], {"axis": 2}, "axis 2 is out of range for rank 2"),
    (LogSoftmaxOp, [spec(3, 4, dtype=np.int64)], {}, "floating-point"),
    (ReduceSumOp, [spec(3, 4)], {"axes": [2]}, "axis 2 is out of range for rank 2"),
    (ReduceMeanOp, [spec(3, 4)], {"axes": [1, -1]}, "repeat an axis"),
    (ReduceMeanOp, [spec(3, 4, dtype=np.int32)], {}, "must not have element type i32"),
    (ReduceMaxOp, [spec(3, 0)], {"axes": [1]}, "cannot reduce the empty axis 1"),
    (ReduceSumOp, [spec(3, 4)], {"keepdims": 2}, "keepdims must be 0 or 1"),
    (ArgMaxOp, [spec(3, 4)], {"axis": -3}, "axis -3 is out of range for rank 2"),
    (ArgMinOp, [spec(3, 4)], {"select_last_index": 5}, "select_last_index must be 0 or 1"),
    (LayerNormalizationOp, [spec(2, 3, 4), spec(3)], {}, "scale tensor<3xf32> must broadcast to the normalized shape (4,)"),
    (LayerNormalizationOp, [spec(2, 3, 4), spec(4), spec(3, 4)], {}, "bias tensor<3x4xf32> must broadcast"),
    (LayerNormalizationOp, [spec(2, 3, 4), spec(4, dtype=np.float64)], {}, "scale must have the input's element type"),
    (InstanceNormalizationOp, [spec(2, 3, 4), spec(3), spec(4)], {}, "bias must be tensor<3xf32>, got tensor<4xf32>"),
]


@pytest.mark.parametrize("cls, operands, attrs, message", ERROR_CASES)
def test_verification_errors(cls, operands, attrs, message):
    with pytest.raises(VerificationError) as error:
        full = cls.complete_attrs(operands, attrs)
        cls.infer(operands, full)
    assert message in str(error.value)


# ----- building into MLIR -----

BUILD_CASES = [
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3), spec(4)], {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    (ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {"auto_pad": "SAME_UPPER"}),
    (ConvTransposeOp, [spec(1, 3, 5, 5), spec(3, 2, 3, 3)], {"strides": [2, 2], "output_padding": [1, 1]}),
    (GemmOp, [spec(2, 3), spec(4, 3), spec(4)], {"transB": 1, "alpha": 0.5}),
    (GemmOp, [spec(2, 3), spec(3, 4)], {}),
    (MatMulOp, [spec(2, 3, 4), spec(4, 5)], {}),
    (MaxPoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    (AveragePoolOp, [spec(1, 3, 8, 8)], {"kernel_shape": [2, 2], "count_include_pad": 1}),
    (GlobalAveragePoolOp, [spec(1, 3, 8, 8)], {}),
    (GlobalMaxPoolOp, [spec(1, 3, 8, 8)], {}),
    (LrnOp, [spec(1, 3, 8, 8)], {"size": 3}),
    (SoftmaxOp, [spec(2, 5)], {}),
    (LogSoftmaxOp, [spec(2, 5)], {"axis": 0}),
    (ReduceSumOp, [spec(2, 5)], {"axes": [1], "keepdims": 0}),
    (ReduceMeanOp, [spec(2, 5)], {}),
    (ReduceLogSumExpOp, [spec(2, 5)], {"axes": [-1]}),
    (ArgMaxOp, [spec(2, 5)], {"axis": 1}),
    (LayerNormalizationOp, [spec(2, 5), spec(5), spec(5)], {}),
    (LayerNormalizationOp, [spec(2, 5), spec(5)], {"epsilon": 1e-6}),
    (InstanceNormalizationOp, [spec(2, 3, 5), spec(3), spec(3)], {}),
]


def _build_module(cls, operands, attrs, result_types=None):
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):

        @func.FuncOp.from_py_func(*[to_mlir(s) for s in operands])
        def f(*args):
            return cls.build(list(args), attrs, result_types).results[0]

    return module


@pytest.mark.parametrize("cls, operands, attrs", BUILD_CASES)
def test_build_verifies_and_prints(cls, operands, attrs):
    context = dnnf_mlir.make_context()
    with context, ir.Location.unknown():
        module = _build_module(cls, operands, attrs)
        assert module.operation.verify()
        text = str(module)
        assert f'"ecg.{cls._op_name}"' in text
        op = next(o for o in module.body.operations[0].regions[0].blocks[0].operations if o.name.startswith("ecg."))
        assert op.opview.mnemonic == cls._op_name
        assert op.opview.mapping_type.value == "Many-to-Many"
        assert op.opview.flops() == cls.count_flops(operands, cls.infer(operands, cls.complete_attrs(operands, attrs)), op.opview.attrs)
        for name, value in attrs.items():
            stored = op.opview.attrs[name]
            assert stored == value, f"{name}: {stored} != {value}"
        reparsed = ir.Module.parse(text)
        assert reparsed.operation.verify()


def test_build_with_wrong_result_type_fails_verification():
    context = dnnf_mlir.make_context()
    with context, ir.Location.unknown():
        wrong = [spec(1, 4, 8, 8)]
        module = _build_module(ConvOp, [spec(1, 3, 8, 8), spec(4, 3, 3, 3)], {}, wrong)
        with pytest.raises(MLIRError, match="do not match the inferred types"):
            module.operation.verify()


def test_parsed_op_with_bad_operands_reports_message():
    context = dnnf_mlir.make_context()
    with context:
        text = """
        func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
          %0 = "ecg.conv"(%x, %w) {auto_pad = "NOTSET", dilations = array<i64: 1, 1>, group = 1 : i64,
                kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
              : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
          return %0 : tensor<1x4x6x6xf32>
        }
        """
        with pytest.raises(MLIRError, match="input channels 3 must equal weight channels 2"):
            ir.Module.parse(text)


def test_mnemonics_and_onnx_names():
    expected = {
        "conv": "Conv", "conv_transpose": "ConvTranspose", "gemm": "Gemm", "mat_mul": "MatMul",
        "max_pool": "MaxPool", "average_pool": "AveragePool", "global_average_pool": "GlobalAveragePool",
        "global_max_pool": "GlobalMaxPool", "lrn": "LRN", "softmax": "Softmax", "log_softmax": "LogSoftmax",
        "reduce_sum": "ReduceSum", "reduce_mean": "ReduceMean", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin",
        "reduce_prod": "ReduceProd", "reduce_l1": "ReduceL1", "reduce_l2": "ReduceL2",
        "reduce_sum_square": "ReduceSumSquare", "reduce_log_sum": "ReduceLogSum",
        "reduce_log_sum_exp": "ReduceLogSumExp", "arg_max": "ArgMax", "arg_min": "ArgMin",
        "layer_normalization": "LayerNormalization", "instance_normalization": "InstanceNormalization",
    }
    from dnnf_mlir.ecg import OPS

    for mnemonic, onnx_name in expected.items():
        cls = OPS[mnemonic]
        assert cls.ONNX == (onnx_name,)
        assert cls.MAPPING.value == "Many-to-Many"
