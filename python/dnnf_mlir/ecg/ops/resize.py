"""Resize: the One-to-Many op that resamples by nearest, (n-)linear or cubic
interpolation, the one data-movement op with FLOPs (the interpolation's).

Its ``sizes`` and ``scales`` attributes hold resolved static values: the importer
computes them from ONNX's scales or sizes input with ``ResizeOp.resolve``.
"""

import numpy as np

from ..attributes import Elements, Float, Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import UNARY_ELEMENTWISE, Algebra, MappingType
from ..shapes import normalize_axes, require
from ..tensor_spec import TensorSpec
from .common import int_list


_TRANSFORMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
_F32 = np.float32


class ResizeOp(ECGOp, name="resize"):
    """Resample every axis to ``sizes`` by nearest, (n-)linear or cubic interpolation.

    ``sizes`` is the final static shape and ``scales`` (f32, one per axis) the scale
    the coordinate transformation uses: ONNX's scales when the model gives them, else
    sizes/input (``resolve`` computes both as onnxruntime does). Coordinates are
    computed in f32 like onnxruntime. ``nearest_mode`` "simple" is Resize-10's and
    Upsample's rounding (ceil when downsampling, else truncation).
    """

    input: Tensor
    output: TensorResult
    sizes: Ints
    scales: Elements
    mode: Str
    coordinate_transformation_mode: Str
    nearest_mode: Str
    cubic_coeff_a: Float
    exclude_outside: Int
    MAPPING = MappingType.ONE_TO_MANY
    ALGEBRA = Algebra(commutes_with=(f"{UNARY_ELEMENTWISE} (nearest mode)",))
    ONNX = ("Resize", "Upsample")
    DEFAULTS = {
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "nearest_mode": "round_prefer_floor",
        "cubic_coeff_a": -0.75,
        "exclude_outside": 0,
    }
    # FLOPs per output element and interpolated axis.
    FLOPS_PER_AXIS = {"nearest": 0, "linear": 3, "cubic": 7}

    @classmethod
    def resolve(cls, input_shape, scales=None, sizes=None, axes=None, keep_aspect_ratio_policy="stretch") -> dict:
        """``sizes`` and ``scales`` attributes for ONNX Resize's scales or sizes input (over ``axes``)."""
        shape = int_list(input_shape)
        rank = len(shape)
        axes = list(range(rank)) if axes is None else normalize_axes(int_list(axes), rank)
        full_scales = np.ones(rank, _F32)
        out = list(shape)
        if sizes is not None:
            sizes = int_list(sizes)
            require(scales is None, "Resize takes scales or sizes, not both")
            require(len(sizes) == len(axes), f"sizes {sizes} must have one entry per axis in {axes}")
            require(all(s >= 0 for s in sizes), f"sizes {sizes} must be non-negative")
            require(all(shape[a] > 0 for a in axes), f"cannot resize the empty input shape {tuple(shape)}")
            ratios = [_F32(s) / _F32(shape[a]) for s, a in zip(sizes, axes)]
            if keep_aspect_ratio_policy == "stretch":
                for a, s, r in zip(axes, sizes, ratios):
                    out[a], full_scales[a] = s, r
            else:
                require(keep_aspect_ratio_policy in ("not_larger", "not_smaller"),
                        f"keep_aspect_ratio_policy '{keep_aspect_ratio_policy}' is not stretch, not_larger or not_smaller")
                scale = min(ratios) if keep_aspect_ratio_policy == "not_larger" else max(ratios)
                for a in axes:
                    out[a] = int(np.floor(np.float64(_F32(scale) * _F32(shape[a])) + 0.5))  # std::round
                    full_scales[a] = scale
        else:
            require(scales is not None, "Resize needs scales or sizes")
            scales = np.asarray(scales, _F32).reshape(-1)
            require(len(scales) == len(axes), f"scales {scales.tolist()} must have one entry per axis in {axes}")
            require(bool(np.all(scales > 0)), f"scales {scales.tolist()} must be positive")
            for a, scale in zip(axes, scales):
                out[a], full_scales[a] = int(_F32(scale) * _F32(shape[a])), scale
        return {"sizes": out, "scales": full_scales}

    @classmethod
    def complete_attrs(cls, operands, attrs):
        """``scales`` defaults to sizes/input (1 for empty dimensions)."""
        if "sizes" in attrs and "scales" not in attrs and len(operands) == 1:
            x, sizes = operands[0], int_list(attrs["sizes"])
            require(len(sizes) == x.rank, f"sizes {sizes} must have one entry per dimension of {x}")
            scales = [_F32(s) / _F32(d) if d > 0 else _F32(1) for s, d in zip(sizes, x.shape)]
            attrs = {**attrs, "scales": np.array(scales, _F32)}
        return super().complete_attrs(operands, attrs)

    @classmethod
    def _check(cls, x: TensorSpec, attrs) -> tuple:
        sizes = int_list(attrs["sizes"])
        scales = np.asarray(attrs["scales"])
        mode, transform, nearest = attrs["mode"], attrs["coordinate_transformation_mode"], attrs["nearest_mode"]
        require(mode in cls.FLOPS_PER_AXIS, f"mode '{mode}' is not nearest, linear or cubic")
        require(transform in _TRANSFORMS,
                f"coordinate_transformation_mode '{transform}' is not supported (one of {', '.join(_TRANSFORMS)})")
        require(nearest in _NEAREST_MODES, f"nearest_mode '{nearest}' is not one of {', '.join(_NEAREST_MODES)}")
        require(attrs["exclude_outside"] in (0, 1), f"exclude_outside must be 0 or 1, got {attrs['exclude_outside']}")
        require(mode == "nearest" or x.is_float, f"{mode} interpolation needs a floating-point input, got {x}")
        require(len(sizes) == x.rank, f"sizes {sizes} must have one entry per dimension of {x}")
        require(all(s >= 0 for s in sizes), f"sizes {sizes} must be non-negative")
        require(scales.dtype == np.float32 and scales.shape == (x.rank,),
                f"scales must be {x.rank} f32 values, got {scales.dtype} {list(scales.shape)}")
        require(bool(np.all(scales > 0)), f"scales {scales.tolist()} must be positive")
        for d, s in zip(x.shape, sizes):
            require(d > 0 or s == 0, f"cannot resize the empty input {x} to {sizes}")
        return sizes, scales.astype(_F32)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        sizes, _ = cls._check(x, attrs)
        return [x.with_shape(sizes)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        (x,), (y,) = operands, results
        scales = np.asarray(attrs["scales"])
        axes = sum(1 for d, s, scale in zip(x.shape, y.shape, scales) if d != s or scale != 1)
        return cls.FLOPS_PER_AXIS.get(attrs["mode"], 0) * axes * y.numel

    @staticmethod
    def _coordinates(out_len: int, in_len: int, scale, transform: str) -> np.ndarray:
        """Input coordinate of each output index, in f32 as onnxruntime computes it."""
        i = np.arange(out_len, dtype=_F32)
        scale, half = _F32(scale), _F32(0.5)
        if transform == "asymmetric":
            return i / scale
        if transform == "align_corners":
            if out_len == 1:
                return np.zeros(1, _F32)
            return i * _F32(in_len - 1) / _F32(out_len - 1)
        if transform == "pytorch_half_pixel" and out_len <= 1:
            return np.zeros(out_len, _F32)
        coords = (i + half) / scale - half
        if transform == "half_pixel_symmetric":
            adjustment = _F32(out_len) / (scale * _F32(in_len))
            offset = _F32(in_len) / _F32(2) * (_F32(1) - adjustment)
            coords = offset + (i + half) / scale - half
        return coords

    @staticmethod
    def _nearest(coords: np.ndarray, mode: str, downsampling: bool) -> np.ndarray:
        if mode == "round_prefer_floor":
            ties = coords == np.trunc(coords) + _F32(0.5)
            return np.where(ties, np.floor(coords), np.sign(coords) * np.floor(np.abs(coords) + _F32(0.5)))
        if mode == "round_prefer_ceil":
            return np.sign(coords) * np.floor(np.abs(coords) + _F32(0.5))  # std::round: halves away from 0
        if mode == "floor":
            return np.floor(coords)
        if mode == "ceil":
            return np.ceil(coords)
        return np.ceil(coords) if downsampling else np.trunc(coords)

    @staticmethod
    def _weights(coords: np.ndarray, in_len: int, mode: str, a: float, exclude_outside: bool) -> np.ndarray:
        """The (out, in) interpolation matrix of one axis (f64)."""
        weights = np.zeros((len(coords), in_len))
        rows = np.arange(len(coords))
        if mode == "linear":
            x = np.clip(coords, 0, in_len - 1).astype(np.float64)
            x1 = np.minimum(np.floor(x).astype(np.int64), in_len - 1)
            x2 = np.minimum(x1 + 1, in_len - 1)
            ratio = np.where(x1 == x2, 0.5, x - x1)
            np.add.at(weights, (rows, x1), 1 - ratio)
            np.add.at(weights, (rows, x2), ratio)
            return weights
        x = coords.astype(np.float64)
        base = np.floor(x).astype(np.int64)
        s = x - base
        distances = [s + 1, s, 1 - s, 2 - s]
        coeffs = np.stack(
            [
                np.where(d <= 1, ((a + 2) * d - (a + 3)) * d * d + 1, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a)
                for d in distances
            ],
            axis=1,
        )
        index = base[:, None] + np.arange(-1, 3)[None, :]
        if exclude_outside:
            coeffs = np.where((index < 0) | (index >= in_len), 0.0, coeffs)
            coeffs = coeffs / coeffs.sum(axis=1, keepdims=True)
        np.add.at(weights, (np.repeat(rows, 4), np.clip(index, 0, in_len - 1).reshape(-1)), coeffs.reshape(-1))
        return weights

    @classmethod
    def reference(cls, inputs, attrs, results):
        x = inputs[0]
        sizes, scales = cls._check(TensorSpec.of(x), attrs)
        mode, transform = attrs["mode"], attrs["coordinate_transformation_mode"]
        y = x if mode == "nearest" else x.astype(np.float64)
        for axis, (in_len, out_len, scale) in enumerate(zip(x.shape, sizes, scales)):
            if in_len == out_len and scale == 1:
                continue
            if out_len == 0:
                y = np.take(y, np.zeros(0, np.int64), axis=axis)
                continue
            coords = cls._coordinates(out_len, in_len, scale, transform)
            if mode == "nearest":
                index = cls._nearest(coords, attrs["nearest_mode"], scale < 1)
                y = np.take(y, np.clip(index, 0, in_len - 1).astype(np.int64), axis=axis)
            else:
                weights = cls._weights(coords, in_len, mode, attrs["cubic_coeff_a"], bool(attrs["exclude_outside"]))
                y = np.moveaxis(np.tensordot(weights, np.moveaxis(y, axis, 0), axes=1), 0, axis)
        return [np.asarray(y).astype(x.dtype)]
