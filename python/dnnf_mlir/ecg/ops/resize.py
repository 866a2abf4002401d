"""Resize: the One-to-Many op that resamples by nearest, (n-)linear or cubic
interpolation, the one data-movement op with FLOPs (the interpolation's).

Its ``sizes`` and ``scales`` attributes hold resolved static values: the importer
computes them from ONNX's scales or sizes input with ``ResizeOp.resolve``. What
each output element reads, and with which weights, is defined axis by axis in
``resize_taps``.
"""

import numpy as np

from ..attributes import Elements, Float, Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import UNARY_ELEMENTWISE, Algebra, MappingType
from ..shapes import normalize_axes, require
from ..tensor_spec import TensorSpec
from .common import int_list
from .resize_taps import axis_taps, tap_count


_TRANSFORMS = (
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize",
)
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
_F32 = np.float32


class ResizeOp(ECGOp, name="resize"):
    """Resample every axis to ``sizes`` by nearest, (n-)linear or cubic interpolation.

    ``sizes`` is the final static shape and ``scales`` (f32, one per axis) the scale
    the coordinate transformation uses: ONNX's scales when the model gives them, else
    sizes/input (``resolve`` computes both as onnxruntime does). Coordinates are
    computed in f32 like onnxruntime. ``nearest_mode`` "simple" is Resize-10's and
    Upsample's rounding (ceil when downsampling, else truncation). ``antialias``
    widens the linear or cubic filter by 1/scale when down-sampling. ``roi`` (f32,
    the starts of every axis then their ends) is tf_crop_and_resize's region, outside
    which the output is ``extrapolation_value``. An axis of scale 1 keeping its size
    is left as it is, its region too (onnxruntime's rule; ONNX's reference crops it), and a
    resize keeping the whole shape is a copy. Nearest rounding takes a coordinate within
    1e-6 of a half for a tie, as onnxruntime does (``resize_taps.nearest_indices``).
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
    antialias: Int
    roi: Elements
    extrapolation_value: Float
    MAPPING = MappingType.ONE_TO_MANY
    ALGEBRA = Algebra(commutes_with=(f"{UNARY_ELEMENTWISE} (nearest mode)",))
    ONNX = ("Resize", "Upsample")
    DEFAULTS = {
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "nearest_mode": "round_prefer_floor",
        "cubic_coeff_a": -0.75,
        "exclude_outside": 0,
        "antialias": 0,
        "extrapolation_value": 0.0,
    }
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
    def default_attrs(cls, operands):
        """``roi`` defaults to the whole input: starts 0, ends 1."""
        rank = operands[0].rank if operands else 0
        return {**cls.DEFAULTS, "roi": np.array([0.0] * rank + [1.0] * rank, _F32)}

    @staticmethod
    def full_roi(rank: int, roi, axes=None) -> np.ndarray:
        """The ``roi`` attribute (every axis' start, then every end) for ONNX's roi input
        over ``axes`` (default: all); the other axes keep the whole input."""
        axes = list(range(rank)) if axes is None else normalize_axes(int_list(axes), rank)
        roi = np.asarray(roi, _F32).reshape(-1)
        require(roi.size == 2 * len(axes), f"roi {roi.tolist()} must have two entries per axis in {axes}")
        full = np.array([0.0] * rank + [1.0] * rank, _F32)
        for i, axis in enumerate(axes):
            full[axis], full[rank + axis] = roi[i], roi[len(axes) + i]
        return full

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
        require(mode in ("nearest", "linear", "cubic"), f"mode '{mode}' is not nearest, linear or cubic")
        require(transform in _TRANSFORMS,
                f"coordinate_transformation_mode '{transform}' is not supported (one of {', '.join(_TRANSFORMS)})")
        require(nearest in _NEAREST_MODES, f"nearest_mode '{nearest}' is not one of {', '.join(_NEAREST_MODES)}")
        require(attrs["exclude_outside"] in (0, 1), f"exclude_outside must be 0 or 1, got {attrs['exclude_outside']}")
        require(attrs["antialias"] in (0, 1), f"antialias must be 0 or 1, got {attrs['antialias']}")
        roi = np.asarray(attrs["roi"])
        require(roi.dtype == np.float32 and roi.shape == (2 * x.rank,),
                f"roi must be {2 * x.rank} f32 values (the starts, then the ends), got {roi.dtype} {list(roi.shape)}")
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
        """A multiply-add per tap but the first (nearest: none), per output element and resized axis."""
        (x,), (y,) = operands, results
        if attrs["mode"] == "nearest" or x.shape == y.shape:
            return 0
        scales = np.asarray(attrs["scales"])
        taps = [tap_count(attrs["mode"], scale, attrs["antialias"])
                for d, s, scale in zip(x.shape, y.shape, scales) if d != s or scale != 1]
        return sum(2 * t - 1 for t in taps) * y.numel

    @classmethod
    def taps(cls, input_shape, attrs) -> dict:
        """{axis: AxisTaps} of every axis the resize changes (``resize_taps``); none when
        the shape is kept, whatever the scales (onnxruntime copies the input then)."""
        sizes, scales = int_list(attrs["sizes"]), np.asarray(attrs["scales"], _F32)
        rank = len(sizes)
        roi = np.asarray(attrs["roi"], _F32)
        taps = {}
        if sizes == int_list(input_shape):
            return taps
        for axis, (in_len, out_len, scale) in enumerate(zip(input_shape, sizes, scales)):
            if in_len != out_len or scale != 1:
                taps[axis] = axis_taps(in_len, out_len, scale, attrs, (roi[axis], roi[rank + axis]))
        return taps

    @classmethod
    def reference(cls, inputs, attrs, results):
        x = inputs[0]
        cls._check(TensorSpec.of(x), attrs)
        y = x if attrs["mode"] == "nearest" else x.astype(np.float64)
        inside = np.ones(results[0].shape, bool)
        for axis, taps in cls.taps(x.shape, attrs).items():
            along = [1] * x.ndim
            along[axis] = -1
            if taps.weights is None:
                y = np.take(y, taps.indices[:, 0], axis=axis)
            else:
                y = sum(np.take(y, taps.indices[:, t], axis=axis) * taps.weights[:, t].reshape(along)
                        for t in range(taps.count))
            if taps.inside is not None:
                inside &= taps.inside.reshape(along)
        y = np.where(inside, y, attrs["extrapolation_value"])
        return [np.asarray(y).astype(x.dtype)]
