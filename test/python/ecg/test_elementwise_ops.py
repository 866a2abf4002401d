"""Elementwise ECG ops (ecg/ops/elementwise.py): reference semantics against
onnxruntime and verifier errors (the conversion tests run the rest through the interpreter)."""

import warnings

import numpy as np
import pytest

from dnnf_mlir.ecg import TensorSpec, VerificationError
from dnnf_mlir.ecg.ops import elementwise
from test_nn_ops import check, run_ecg


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])  # onnxruntime has no uint16 BitShift
def test_bit_shift_matches_onnxruntime(direction, dtype):
    """Amounts of the bit width or more give 0 in onnxruntime too (ONNX leaves them open)."""
    width = np.dtype(dtype).itemsize * 8
    x = np.array([[1, 3, 255, 128, 7, 16]], dtype)
    y = np.array([0, 1, width - 1, width, width + 1, 2 * width], dtype)
    check(elementwise.BitShiftOp, "BitShift", [x, y], {"direction": direction})


def test_bit_shift_signed_sign_fill():
    """BitShift-28: arithmetic right shift; negative or too large amounts leave the sign fill."""
    x = np.array([-5, -5, 5, -128, 3, 64], np.int8)
    y = np.array([1, -1, 8, 9, -1, 1], np.int8)
    right, _ = run_ecg(elementwise.BitShiftOp, [x, y], {"direction": "RIGHT"})
    np.testing.assert_array_equal(right, [-3, -1, 0, -1, 0, 32])
    left, _ = run_ecg(elementwise.BitShiftOp, [x, y], {"direction": "LEFT"})
    np.testing.assert_array_equal(left, [-10, 0, 0, 0, 0, -128])


@pytest.mark.parametrize("dtype, attrs, message", [
    (np.uint8, {"direction": "UP"}, "direction 'UP' must be LEFT or RIGHT"),
    (np.uint8, {}, "requires attribute direction"),
    (np.float32, {"direction": "LEFT"}, "operands must not have element type f32"),
])
def test_bit_shift_rejects(dtype, attrs, message):
    with pytest.raises(VerificationError, match=message):
        run_ecg(elementwise.BitShiftOp, [np.zeros(3, dtype)] * 2, attrs)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_square(dtype):
    """x*x, wrapping like numpy for integers; no ONNX op imports to it."""
    x = np.array([-3, 0, 2, 100]).astype(dtype)
    y, spec = run_ecg(elementwise.SquareOp, [x], {})
    np.testing.assert_array_equal(y, x * x)
    assert spec == TensorSpec.of(x) and elementwise.SquareOp.ONNX == ()


def test_cast_undefined_values_do_not_warn():
    """A float with no integer value (undefined in ONNX) casts silently: T5 casts log(0)
    and discards it; the defined lanes are exact."""
    x = np.array([-np.inf, np.nan, 1e30, 2.75, -3.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, _ = run_ecg(elementwise.CastOp, [x], {"to": "i64"})
    np.testing.assert_array_equal(y[3:], [2, -3])
