"""Many-to-Many pooling: max and average pooling over sliding windows, their global
forms, and LRN (a sum of squares over a window of channels).

The windowed pools take their padding and output sizes from the shared window
geometry (windows.py); the numpy implementations are in ``ecg/reference_windows.py``.
"""

from math import prod

import numpy as np

from .. import reference_windows
from ..attributes import Float, Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import reachable_kernel, require, require_float
from ..tensor_spec import TensorSpec, compute_dtype, dtype_name, element_kind
from .common import LINEAR, MONOTONE
from .windows import check_window_attrs, require_outputs, spatial_defaults, window_geometry


class _WindowPool(ECGOp):
    """Shared fields of MaxPool/AveragePool: a window slid over (N, C, *spatial)."""

    input: Tensor
    output: TensorResult
    auto_pad: Str
    ceil_mode: Int
    dilations: Ints
    kernel_shape: Ints
    pads: Ints
    strides: Ints
    MAPPING = MappingType.MANY_TO_MANY
    KINDS = "f"

    @classmethod
    def default_attrs(cls, operands):
        spatial = spatial_defaults(operands, "strides", "dilations", "pads")
        return {"auto_pad": "NOTSET", "ceil_mode": 0, **spatial, **cls.DEFAULTS}

    @classmethod
    def geometry(cls, x: TensorSpec, attrs):
        return window_geometry(
            x.shape[2:], attrs["kernel_shape"], attrs["strides"], attrs["dilations"], attrs["pads"], attrs["auto_pad"],
            attrs["ceil_mode"],
        )

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(element_kind(x.dtype) in cls.KINDS, f"input must not have element type {dtype_name(x.dtype)}")
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        check_window_attrs(x.rank - 2, attrs, attrs["kernel_shape"])
        require(attrs["ceil_mode"] in (0, 1), f"ceil_mode must be 0 or 1, got {attrs['ceil_mode']}")
        if attrs["auto_pad"] == "NOTSET":
            kernel, pads = list(attrs["kernel_shape"]), list(attrs["pads"])
            require(
                all(p < k for p, k in zip(pads, kernel + kernel)),
                f"pads {pads} must be smaller than kernel_shape {kernel} (a window would lie in the padding only)",
            )
        outs = require_outputs(x.shape[2:], attrs["kernel_shape"], attrs["dilations"], cls.geometry(x, attrs))
        return [TensorSpec(x.shape[:2] + tuple(outs), x.dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        begins, ends, _ = cls.geometry(operands[0], attrs)
        return results[0].numel * prod(
            reachable_kernel(operands[0].shape[2:], begins, ends, attrs["kernel_shape"], attrs["dilations"]))


class MaxPoolOp(_WindowPool, name="max_pool"):
    """Max over each window (padding excluded). Only ONNX's first output (no Indices)."""

    storage_order: Int
    ALGEBRA = Algebra(commutes_with=MONOTONE)
    ONNX = ("MaxPool",)
    DEFAULTS = {"storage_order": 0}
    KINDS = "fiu"

    @classmethod
    def infer(cls, operands, attrs):
        require(attrs["storage_order"] in (0, 1), f"storage_order must be 0 or 1, got {attrs['storage_order']}")
        return super().infer(operands, attrs)

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        begins, ends, outs = cls.geometry(TensorSpec.of(x), attrs)
        return [reference_windows.max_pool(x, attrs["kernel_shape"], begins, ends, attrs["strides"], attrs["dilations"], outs)]


class AveragePoolOp(_WindowPool, name="average_pool"):
    """Mean over each window; ``count_include_pad`` counts explicit padding in the divisor."""

    count_include_pad: Int
    ALGEBRA = Algebra(commutes_with=LINEAR)
    ONNX = ("AveragePool",)
    DEFAULTS = {"count_include_pad": 0}

    @classmethod
    def infer(cls, operands, attrs):
        require(attrs["count_include_pad"] in (0, 1), f"count_include_pad must be 0 or 1, got {attrs['count_include_pad']}")
        return super().infer(operands, attrs)

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        begins, ends, outs = cls.geometry(TensorSpec.of(x), attrs)
        y = reference_windows.average_pool(
            x, attrs["kernel_shape"], begins, ends, attrs["strides"], attrs["dilations"], outs, attrs["count_include_pad"]
        )
        return [y]


class _GlobalPool(ECGOp):
    input: Tensor
    output: TensorResult
    MAPPING = MappingType.MANY_TO_MANY
    KINDS = "f"

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(element_kind(x.dtype) in cls.KINDS, f"input must not have element type {dtype_name(x.dtype)}")
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        return [x.with_shape(x.shape[:2] + (1,) * (x.rank - 2))]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return operands[0].numel

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        axes = tuple(range(2, x.ndim))
        return [np.asarray(cls.compute(x, axes)).astype(results[0].dtype, copy=False)]


class GlobalAveragePoolOp(_GlobalPool, name="global_average_pool"):
    """Mean over all spatial dimensions, keeping them as size 1."""

    ALGEBRA = Algebra(commutes_with=LINEAR)
    ONNX = ("GlobalAveragePool",)

    @staticmethod
    def compute(x, axes):
        return np.mean(x, axis=axes, keepdims=True, dtype=compute_dtype(x.dtype))


class GlobalMaxPoolOp(_GlobalPool, name="global_max_pool"):
    """Max over all spatial dimensions, keeping them as size 1."""

    ALGEBRA = Algebra(commutes_with=MONOTONE)
    ONNX = ("GlobalMaxPool",)

    @staticmethod
    def compute(x, axes):
        return np.max(x, axis=axes, keepdims=True)


class LrnOp(ECGOp, name="lrn"):
    """Local response normalization across channels: x / (bias + alpha/size * sum(x^2))^beta."""

    input: Tensor
    output: TensorResult
    alpha: Float
    beta: Float
    bias: Float
    size: Int
    MAPPING = MappingType.MANY_TO_MANY
    ONNX = ("LRN",)
    DEFAULTS = {"alpha": 0.0001, "beta": 0.75, "bias": 1.0}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require_float(x, "input")
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        require(attrs["size"] >= 1, f"size must be positive, got {attrs['size']}")
        return [x]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return results[0].numel * (attrs["size"] + 5)

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [reference_windows.lrn(inputs[0], attrs["size"], attrs["alpha"], attrs["beta"], attrs["bias"])]
