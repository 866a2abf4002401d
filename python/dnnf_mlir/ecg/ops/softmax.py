"""Many-to-Many softmax and log_softmax along one axis, computed stably (the
maximum subtracted first)."""

import numpy as np

from ..attributes import Int
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import normalize_axis, require_float
from ..tensor_spec import compute_dtype


class _Softmax(ECGOp):
    input: Tensor
    output: TensorResult
    axis: Int
    MAPPING = MappingType.MANY_TO_MANY
    FLOPS_PER_ELEMENT = 5
    DEFAULTS = {"axis": -1}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require_float(x, "input")
        normalize_axis(attrs["axis"], x.rank)
        return [x]

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        dtype = x.dtype
        x = x.astype(compute_dtype(dtype), copy=False)
        axis = normalize_axis(attrs["axis"], x.ndim) if x.ndim else None
        with np.errstate(all="ignore"):
            shifted = x - np.max(x, axis=axis, keepdims=True)
            y = cls.compute(shifted, axis)
        return [np.asarray(y).astype(dtype, copy=False)]


class SoftmaxOp(_Softmax, name="softmax"):
    """exp(x) / sum(exp(x)) along ``axis`` (ONNX opset >= 13 semantics)."""

    ONNX = ("Softmax",)

    @staticmethod
    def compute(shifted, axis):
        e = np.exp(shifted)
        return e / np.sum(e, axis=axis, keepdims=True)


class LogSoftmaxOp(_Softmax, name="log_softmax"):
    """x - log(sum(exp(x))) along ``axis`` (ONNX opset >= 13 semantics)."""

    ONNX = ("LogSoftmax",)

    @staticmethod
    def compute(shifted, axis):
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
