"""float8 models compiled for the host, checked bit for bit against ONNX's reference (ml_dtypes).

The compiled conversions are integer arithmetic on the byte (MLIR lowers no f8
``extf``/``truncf`` to LLVM), so every one of the 256 codes of each type is decoded,
and a dense sweep of f32 and f16 values is encoded: every float8 value, the midpoints
between neighbours (ties, rounded to even) and the floats just beside them, values
past the largest finite one (overflow: NaN, or infinity for E5M2, unless saturated),
subnormals of both types, signed zeros, infinities, NaN and random f32 bit patterns.
"""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from dnnf_mlir import InferenceSession
from dnnf_mlir.frontend.onnx_types import OnnxImportError
from dnnf_mlir.onnx_backend import DnnfBackend

FLOAT8 = {
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "float8", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _compiled_and_reference(model, feeds):
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)
    with np.errstate(invalid="ignore", over="ignore"):
        want = ReferenceEvaluator(model).run(None, feeds)
    return got, want


def _assert_same_codes(got, want, dtype):
    """Equal bytes, except that any NaN code stands for NaN."""
    assert got.dtype == np.dtype(dtype)
    got_nan, want_nan = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    differ = (got.view(np.uint8) != want.view(np.uint8)) & ~(got_nan & want_nan)
    assert not differ.any(), (np.flatnonzero(differ)[:8], got.view(np.uint8)[differ][:8], want.view(np.uint8)[differ][:8])


def _sweep(dtype) -> np.ndarray:
    values = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)
    finite = np.unique(values[np.isfinite(values)])
    ties = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)
    largest = float(ml_dtypes.finfo(dtype).max)
    near = np.concatenate([finite, ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf), finite * 1.0625])
    special = np.array([np.inf, np.nan, 3e38, 1e-30, 1e-45, largest * 1.06, largest * 1.07, largest * 2], np.float32)
    random_bits = np.random.default_rng(0).integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([near, -near, special, -special, random_bits])


def test_every_code_decodes_exactly():
    """Each type's 256 codes to f32 and to f16: values, signs of zeros, infinities, NaN."""
    codes = np.arange(256, dtype=np.uint8)
    nodes, inputs, outputs, feeds = [], [], [], {}
    for onnx_type, dtype in FLOAT8.items():
        name = dtype.__name__
        feeds[name] = codes.view(dtype)
        inputs.append(helper.make_tensor_value_info(name, onnx_type, [256]))
        for to, suffix in ((TensorProto.FLOAT, "f32"), (TensorProto.FLOAT16, "f16")):
            nodes.append(helper.make_node("Cast", [name], [f"{name}_{suffix}"], to=to))
            outputs.append(helper.make_tensor_value_info(f"{name}_{suffix}", to, [256]))
    got, _ = _compiled_and_reference(_model(nodes, inputs, outputs), feeds)
    for index, (name, x) in enumerate(feeds.items()):
        for result, wide in zip(got[2 * index:2 * index + 2], (np.float32, np.float16)):
            want = x.astype(wide)
            np.testing.assert_array_equal(result, want, err_msg=name)  # NaN where NaN
            numbers = ~np.isnan(want)
            np.testing.assert_array_equal(np.signbit(result[numbers]), np.signbit(want[numbers]), err_msg=name)


@pytest.mark.parametrize("source", [TensorProto.FLOAT, TensorProto.FLOAT16], ids=["f32", "f16"])
def test_encoding_rounds_saturates_and_overflows_as_the_reference(source):
    """Cast (saturate 0 and 1) and CastLike to each type, on the sweep, bit for bit."""
    nodes, outputs, feeds, inputs = [], [], {}, []
    for onnx_type, dtype in FLOAT8.items():
        name = dtype.__name__
        with np.errstate(over="ignore"):
            feeds[name] = _sweep(dtype).astype(helper.tensor_dtype_to_np_dtype(source))
        size = feeds[name].size
        inputs.append(helper.make_tensor_value_info(name, source, [size]))
        for saturate in (0, 1):
            nodes.append(helper.make_node("Cast", [name], [f"{name}_{saturate}"], to=onnx_type, saturate=saturate))
            outputs.append(helper.make_tensor_value_info(f"{name}_{saturate}", onnx_type, [size]))
    like = numpy_helper.from_array(np.zeros(1, ml_dtypes.float8_e5m2), "like")
    nodes.append(helper.make_node("CastLike", [inputs[2].name, "like"], ["cast_like"], saturate=0))
    outputs.append(helper.make_tensor_value_info("cast_like", TensorProto.FLOAT8E5M2, [feeds[inputs[2].name].size]))
    got, want = _compiled_and_reference(_model(nodes, inputs, outputs, [like]), feeds)
    types = [dtype for dtype in FLOAT8.values() for _ in (0, 1)] + [ml_dtypes.float8_e5m2]
    for result, expected, dtype in zip(got, want, types):
        _assert_same_codes(result, expected, dtype)


def test_quantize_and_dequantize_float8():
    """QuantizeLinear to E4M3FN (saturating, per axis) and E5M2 (not saturating), and
    DequantizeLinear of an E4M3FN initializer (its bytes read from the constant) into a MatMul."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 64)) * 300).astype(np.float32)
    weights = (rng.standard_normal((64, 8)) * 20).astype(ml_dtypes.float8_e4m3fn)
    initializers = [
        numpy_helper.from_array(np.array([0.5, 2.0, 1.0, 0.25], np.float32), "axis_scale"),
        numpy_helper.from_array(np.zeros(4, ml_dtypes.float8_e4m3fn), "zero_e4m3"),
        numpy_helper.from_array(np.array(0.005, np.float32), "scale"),
        numpy_helper.from_array(np.array(0, ml_dtypes.float8_e5m2), "zero_e5m2"),
        numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(0.125, np.float32), "w_scale"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "axis_scale", "zero_e4m3"], ["q_e4m3"], axis=0),
        helper.make_node("QuantizeLinear", ["x", "scale", "zero_e5m2"], ["q_e5m2"], saturate=0),
        helper.make_node("DequantizeLinear", ["q_e4m3", "axis_scale"], ["dq"], axis=0),
        helper.make_node("DequantizeLinear", ["w", "w_scale"], ["w_real"]),
        helper.make_node("MatMul", ["dq", "w_real"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("q_e4m3", TensorProto.FLOAT8E4M3FN, [4, 64]),
               helper.make_tensor_value_info("q_e5m2", TensorProto.FLOAT8E5M2, [4, 64]),
               helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])], outputs, initializers)
    got, want = _compiled_and_reference(model, {"x": x})
    _assert_same_codes(got[0], want[0], ml_dtypes.float8_e4m3fn)
    _assert_same_codes(got[1], want[1], ml_dtypes.float8_e5m2)
    assert np.abs(got[1].astype(np.float32)).max() == np.inf  # some values overflowed to infinity
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-3)


def test_nonzero_float8_zero_point_is_refused():
    initializers = [numpy_helper.from_array(np.array(1.0, np.float32), "scale"),
                    numpy_helper.from_array(np.array(2.0, ml_dtypes.float8_e4m3fn), "zero")]
    model = _model([helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [4])], initializers)
    with pytest.raises(OnnxImportError, match="QuantizeLinear.*nonzero float8 zero point"):
        InferenceSession(model, use_cache=False, threads=1)


def test_arithmetic_on_float8_as_the_interpreter():
    """Add, Relu and a MatMul on E4M3FN tensors: computed in f32 between conversions, one
    rounding per op, as the interpreter (which ONNX's float8 Cast cases check) computes them."""
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("MatMul", ["r", "b"], ["m"])]
    model = _model(nodes, [helper.make_tensor_value_info(n, TensorProto.FLOAT8E4M3FN, [8, 8]) for n in "ab"],
                   [helper.make_tensor_value_info(n, TensorProto.FLOAT8E4M3FN, [8, 8]) for n in "rm"])
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((8, 8)).astype(ml_dtypes.float8_e4m3fn) for _ in range(2))
    got = InferenceSession(model, use_cache=False, threads=1).run(None, {"a": a, "b": b})
    want = DnnfBackend.prepare(model, "CPU").run([a, b])
    for result, expected in zip(got, want):
        _assert_same_codes(result, expected, ml_dtypes.float8_e4m3fn)
    assert np.abs(got[1].astype(np.float32)).max() > 4  # the product is not all zeros
