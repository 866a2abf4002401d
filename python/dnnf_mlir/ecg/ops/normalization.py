"""Many-to-Many normalizations: layer_normalization and instance_normalization
(mean and variance over some axes, then a scale and shift).

LRN, a sum over a window of channels, is in pooling.py; batch_normalization,
elementwise at inference, is in elementwise.py.
"""

from typing import Optional

import numpy as np

from ..attributes import Float, Int
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import normalize_axis, require, require_float
from ..tensor_spec import TensorSpec, compute_dtype
from .common import broadcasts_to


class LayerNormalizationOp(ECGOp, name="layer_normalization"):
    """Normalize over the axes from ``axis`` on, then scale (and shift). Only ONNX's first output."""

    input: Tensor
    scale: Tensor
    output: TensorResult
    axis: Int
    epsilon: Float
    stash_type: Int
    bias: Optional[Tensor] = None
    MAPPING = MappingType.MANY_TO_MANY
    FLOPS_PER_ELEMENT = 8
    ONNX = ("LayerNormalization",)
    DEFAULTS = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}

    @classmethod
    def infer(cls, operands, attrs):
        require(len(operands) in (2, 3), f"expects input, scale and an optional bias, got {len(operands)} operands")
        x = operands[0]
        require_float(x, "input")
        require(x.rank >= 1, f"input must have rank >= 1, got {x}")
        axis = normalize_axis(attrs["axis"], x.rank)
        normalized = x.shape[axis:]
        for name, spec in zip(("scale", "bias"), operands[1:]):
            require(spec.dtype == x.dtype, f"{name} must have the input's element type, got {spec}")
            require(
                broadcasts_to(spec.shape, normalized), f"{name} {spec} must broadcast to the normalized shape {normalized}"
            )
        require(attrs["stash_type"] in (1, 11), f"stash_type must be 1 (float) or 11 (double), got {attrs['stash_type']}")
        return [x]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, scale = inputs[:2]
        dtype = x.dtype
        ctype = np.float64 if attrs["stash_type"] == 11 or dtype == np.float64 else np.float32
        axes = tuple(range(normalize_axis(attrs["axis"], x.ndim), x.ndim))
        xc = x.astype(ctype, copy=False)
        mean = np.mean(xc, axis=axes, keepdims=True)
        centered = xc - mean
        var = np.mean(np.square(centered), axis=axes, keepdims=True)
        normed = (centered / np.sqrt(var + np.array(attrs["epsilon"], ctype))).astype(dtype, copy=False)
        y = normed * scale
        if len(inputs) == 3:
            y = y + inputs[2]
        return [y.astype(dtype, copy=False)]


class InstanceNormalizationOp(ECGOp, name="instance_normalization"):
    """Normalize each (n, c) over the spatial dimensions, then scale and shift per channel."""

    input: Tensor
    scale: Tensor
    bias: Tensor
    output: TensorResult
    epsilon: Float
    MAPPING = MappingType.MANY_TO_MANY
    FLOPS_PER_ELEMENT = 8
    ONNX = ("InstanceNormalization",)
    DEFAULTS = {"epsilon": 1e-5}

    @classmethod
    def infer(cls, operands, attrs):
        x, *params = operands
        require_float(x, "input")
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        for name, p in zip(("scale", "bias"), params):
            expected = TensorSpec((x.shape[1],), x.dtype)
            require(p == expected, f"{name} must be {expected}, got {p}")
        return [x]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, scale, bias = inputs
        dtype = x.dtype
        ctype = compute_dtype(dtype)
        xc = x.astype(ctype, copy=False)
        axes = tuple(range(2, x.ndim))
        mean = np.mean(xc, axis=axes, keepdims=True)
        centered = xc - mean
        var = np.mean(np.square(centered), axis=axes, keepdims=True)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        y = centered / np.sqrt(var + np.array(attrs["epsilon"], ctype))
        y = y * scale.astype(ctype).reshape(shape) + bias.astype(ctype).reshape(shape)
        return [y.astype(dtype, copy=False)]
