"""One-to-One linear (de)quantization: quantize_linear and dequantize_linear.

The scale and the zero point are operands that broadcast the numpy way against the
input: the importer reshapes ONNX's per-axis and blocked parameters so that they do
(``(C, 1, 1)`` for axis 1 of a 4-d tensor), and always gives a zero point (zeros of
the quantized type when the model has none). Being One-to-One, both fuse into the
epilogue of the op before them and the prologue of the op after them. The QOperator
forms (QLinearConv, MatMulInteger, ...) are built from these by the importer.
"""

import numpy as np

from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import broadcast, require, require_float
from ..tensor_spec import TensorSpec, dtype_name

# The integer types a quantized tensor may have.
QUANTIZED_TYPES = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32))


def _require_quantized(spec: TensorSpec, what: str):
    require(spec.dtype in QUANTIZED_TYPES,
            f"{what} must be int8, uint8, int16, uint16 or int32, got {dtype_name(spec.dtype)}")


def compute_type(dtype) -> np.dtype:
    """The float type (de)quantization computes in: float32 for float16, as onnxruntime."""
    return np.promote_types(dtype, np.float32)


def quantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """saturate(round_half_even(x / scale) + zero_point), as onnxruntime computes it: the
    quotient in ``compute_type``, the rest in float64 (exact for every quantized type)."""
    limits = np.iinfo(zero_point.dtype)
    ctype = compute_type(x.dtype)
    with np.errstate(all="ignore"):
        quotient = np.rint(x.astype(ctype) / scale.astype(ctype)).astype(np.float64)
    shifted = np.clip(quotient + zero_point.astype(np.float64), limits.min, limits.max)
    return np.nan_to_num(shifted, nan=0.0).astype(zero_point.dtype)


class QuantizeLinearOp(ECGOp, name="quantize_linear"):
    """y = saturate(round_half_even(x / scale) + zero_point): the result has the zero
    point's integer type; scale and zero point broadcast against x."""

    input: Tensor
    scale: Tensor
    zero_point: Tensor
    output: TensorResult
    MAPPING = MappingType.ONE_TO_ONE
    FLOPS_PER_ELEMENT = 4  # divide, round, add, clamp
    ONNX = ("QuantizeLinear",)

    @classmethod
    def infer(cls, operands, attrs):
        x, scale, zero_point = operands
        require_float(x, "input")
        require(scale.dtype == x.dtype, f"scale must have the input's element type {dtype_name(x.dtype)}, got {scale}")
        _require_quantized(zero_point, "zero_point")
        return [TensorSpec(broadcast(x.shape, scale.shape, zero_point.shape), zero_point.dtype)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, scale, zero_point = inputs
        return [np.broadcast_to(quantize(x, scale, zero_point), results[0].shape)]


class DequantizeLinearOp(ECGOp, name="dequantize_linear"):
    """y = (x - zero_point) * scale: the difference in int32 (wrapping for int32 inputs,
    as onnxruntime's), converted to float and scaled in ``compute_type`` of the scale's
    type, which the result has; x and zero point have one type."""

    input: Tensor
    scale: Tensor
    zero_point: Tensor
    output: TensorResult
    MAPPING = MappingType.ONE_TO_ONE
    FLOPS_PER_ELEMENT = 2
    ONNX = ("DequantizeLinear",)

    @classmethod
    def infer(cls, operands, attrs):
        x, scale, zero_point = operands
        _require_quantized(x, "input")
        require_float(scale, "scale")
        require(zero_point.dtype == x.dtype, f"zero_point must have the input's element type, got {zero_point}")
        return [TensorSpec(broadcast(x.shape, scale.shape, zero_point.shape), scale.dtype)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, scale, zero_point = inputs
        ctype = compute_type(scale.dtype)
        with np.errstate(over="ignore"):
            difference = x.astype(np.int32) - zero_point.astype(np.int32)
        y = difference.astype(ctype) * scale.astype(ctype)
        return [np.broadcast_to(y.astype(scale.dtype), results[0].shape)]
