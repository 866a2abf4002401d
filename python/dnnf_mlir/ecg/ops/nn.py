"""Many-to-Many ops: convolutions, matrix products, pooling, normalizations,
softmax and reductions.

Windowed ops (convolution, pooling) share ``window_geometry``, which resolves
``auto_pad``/``pads``/``ceil_mode`` into explicit begin/end pads and output
sizes as ONNX (spec and shape inference) and ONNX Runtime do; ``infer`` and
``reference`` both use it, and the numpy implementations live in ``ecg/reference_windows.py``.
"""

from math import prod
from typing import Optional

import numpy as np

from .. import reference_windows
from ..attributes import Float, Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import (
    broadcast, normalize_axes, normalize_axis, reachable_kernel, require, require_float, same_dtype,
)
from ..tensor_spec import TensorSpec, dtype_name


_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
# Non-decreasing elementwise ops g: max(g(x)) == g(max(x)), and likewise for min.
_MONOTONE = ("relu", "exp", "sigmoid", "tanh", "erf", "floor", "ceil", "round", "softplus", "clip")
_LINEAR = ("neg",)


def _spatial_defaults(operands, *names) -> dict:
    """Per-spatial-dimension defaults (strides/dilations 1, pads 0) from the input rank."""
    spatial = max(operands[0].rank - 2, 0) if operands else 0
    values = {"strides": [1] * spatial, "dilations": [1] * spatial, "pads": [0] * (2 * spatial)}
    return {name: values[name] for name in names}


def _check_window_attrs(spatial: int, attrs: dict, kernel):
    """Validate auto_pad, strides, dilations, pads (and kernel) for ``spatial`` dimensions."""
    auto_pad = attrs["auto_pad"]
    require(auto_pad in _AUTO_PADS, f"auto_pad must be one of {', '.join(_AUTO_PADS)}, got '{auto_pad}'")
    require(len(kernel) == spatial, f"kernel_shape {list(kernel)} must have {spatial} entries (one per spatial dimension)")
    require(all(k >= 1 for k in kernel), f"kernel_shape {list(kernel)} must be positive")
    for name in ("strides", "dilations"):
        values = attrs[name]
        require(len(values) == spatial, f"{name} {list(values)} must have {spatial} entries (one per spatial dimension)")
        require(all(v >= 1 for v in values), f"{name} {list(values)} must be positive")
    pads = attrs["pads"]
    require(len(pads) == 2 * spatial, f"pads {list(pads)} must have {2 * spatial} entries (begins then ends)")
    require(all(p >= 0 for p in pads), f"pads {list(pads)} must not be negative")


def window_geometry(in_sizes, kernel, strides, dilations, pads, auto_pad, ceil_mode=0):
    """Resolve padding for a windowed op: ``(begins, ends, out_sizes)``.

    ``pads`` are ONNX's [x1_begin, x2_begin, ..., x1_end, x2_end] and apply only
    with auto_pad NOTSET. SAME_* give ``ceil(in/stride)`` outputs (whatever
    ceil_mode) with the total pad ``(out-1)*stride + (kernel-1)*dilation + 1 - in``
    (at least 0), its odd element at the end (UPPER) or the beginning (LOWER).
    In ceil mode a last window that would start in the end padding is dropped
    (the ONNX and ONNX Runtime rule).

    Where ONNX Runtime departs from this it contradicts ONNX shape inference:
    SAME pooling with dilations (it pads for the undilated kernel) and SAME with
    a stride above the kernel extent (negative pads: MaxPool fails, AveragePool
    with SAME_UPPER shifts its windows; Conv clamps to 0 as here).
    """
    spatial = len(in_sizes)
    begins, ends, outs = [], [], []
    for i in range(spatial):
        size, k, s, d = in_sizes[i], kernel[i], strides[i], dilations[i]
        extent = (k - 1) * d + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = -(-size // s)
            total = max(0, (out - 1) * s + extent - size)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            end = total - begin
        else:
            begin, end = (0, 0) if auto_pad == "VALID" else (pads[i], pads[i + spatial])
            span = size + begin + end - extent
            out = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and out > 1 and (out - 1) * s >= size + begin:
                out -= 1
        begins.append(begin)
        ends.append(end)
        outs.append(out)
    return begins, ends, outs


def _require_outputs(in_sizes, kernel, dilations, geometry):
    """Every spatial output size must be positive: the window must fit the padded input."""
    begins, ends, outs = geometry
    for i, (size, k, d, b, e, out) in enumerate(zip(in_sizes, kernel, dilations, begins, ends, outs)):
        require(
            out >= 1,
            f"spatial dimension {i} of size {size} (padded {size + b + e}) is smaller than the window extent "
            f"{(k - 1) * d + 1}; the output size would be {out}",
        )
    return outs


# ----- convolutions -----


class ConvOp(ECGOp, name="conv"):
    """N-d grouped convolution (cross-correlation) of (N, C, *spatial) with (M, C/group, *kernel)."""

    input: Tensor
    weight: Tensor
    output: TensorResult
    auto_pad: Str
    dilations: Ints
    group: Int
    kernel_shape: Ints
    pads: Ints
    strides: Ints
    bias: Optional[Tensor] = None
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = Algebra(distributes_over=("add", "sub"))
    ONNX = ("Conv",)

    @classmethod
    def default_attrs(cls, operands):
        defaults = {"auto_pad": "NOTSET", "group": 1, **_spatial_defaults(operands, "strides", "dilations", "pads")}
        if len(operands) > 1:
            defaults["kernel_shape"] = list(operands[1].shape[2:])
        return defaults

    @classmethod
    def geometry(cls, operands, attrs):
        x, w = operands[:2]
        return window_geometry(
            x.shape[2:], w.shape[2:], attrs["strides"], attrs["dilations"], attrs["pads"], attrs["auto_pad"]
        )

    @classmethod
    def infer(cls, operands, attrs):
        require(len(operands) in (2, 3), f"expects input, weight and an optional bias, got {len(operands)} operands")
        x, w = operands[:2]
        require_float(x, "input")
        same_dtype(operands)
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        require(w.rank == x.rank, f"weight must have the input's rank {x.rank}, got {w}")
        spatial = x.rank - 2
        _check_window_attrs(spatial, attrs, attrs["kernel_shape"])
        require(
            list(attrs["kernel_shape"]) == list(w.shape[2:]),
            f"kernel_shape {list(attrs['kernel_shape'])} does not match the weight's spatial shape {list(w.shape[2:])}",
        )
        group = attrs["group"]
        channels, features = x.shape[1], w.shape[0]
        require(group >= 1, f"group must be positive, got {group}")
        require(
            channels == w.shape[1] * group,
            f"input channels {channels} must equal weight channels {w.shape[1]} * group {group}",
        )
        require(features % group == 0, f"output channels {features} must be divisible by group {group}")
        if len(operands) == 3:
            require(operands[2].shape == (features,), f"bias must have shape ({features},), got {operands[2]}")
        outs = _require_outputs(x.shape[2:], w.shape[2:], attrs["dilations"], cls.geometry(operands, attrs))
        return [TensorSpec((x.shape[0], features, *outs), x.dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        x, w = operands[:2]
        (y,) = results
        macs = y.numel * (x.shape[1] // attrs["group"]) * prod(w.shape[2:])
        return 2 * macs + (y.numel if len(operands) == 3 else 0)

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, w = inputs[:2]
        bias = inputs[2] if len(inputs) == 3 else None
        begins, ends, outs = cls.geometry([TensorSpec.of(x), TensorSpec.of(w)], attrs)
        y = reference_windows.conv(x, w, bias, begins, ends, attrs["strides"], attrs["dilations"], attrs["group"], outs)
        return [y]


class ConvTransposeOp(ECGOp, name="conv_transpose"):
    """N-d grouped transposed convolution of (N, C, *spatial) with (C, M/group, *kernel).

    The full result has ``(in-1)*stride + output_padding + (kernel-1)*dilation + 1``
    elements per spatial dimension; ``pads`` crop it. With ``output_shape``
    (spatial dimensions; zero-extended if above the full size, by less than a
    stride) or SAME_* (output ``in * stride``, or the full size if that is
    smaller) the crop is derived instead: the odd element goes to the end for
    SAME_UPPER and to the beginning otherwise (the ONNX spec, ONNX shape inference
    and ONNX Runtime agree).
    """

    input: Tensor
    weight: Tensor
    output: TensorResult
    auto_pad: Str
    dilations: Ints
    group: Int
    kernel_shape: Ints
    output_padding: Ints
    pads: Ints
    strides: Ints
    output_shape: Ints
    bias: Optional[Tensor] = None
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = Algebra(distributes_over=("add", "sub"))
    ONNX = ("ConvTranspose",)

    @classmethod
    def default_attrs(cls, operands):
        defaults = {
            "auto_pad": "NOTSET",
            "group": 1,
            "output_shape": [],
            **_spatial_defaults(operands, "strides", "dilations", "pads"),
        }
        defaults["output_padding"] = [0] * len(defaults["strides"])
        if len(operands) > 1:
            defaults["kernel_shape"] = list(operands[1].shape[2:])
        return defaults

    @classmethod
    def geometry(cls, operands, attrs):
        """(begins, out_sizes) of the crop from the full transposed-convolution result."""
        x, w = operands[:2]
        in_sizes, kernel = x.shape[2:], w.shape[2:]
        spatial = len(in_sizes)
        auto_pad, pads = attrs["auto_pad"], attrs["pads"]
        requested = list(attrs["output_shape"])
        begins, outs = [], []
        for i in range(spatial):
            s, d, adj = attrs["strides"][i], attrs["dilations"][i], attrs["output_padding"][i]
            full = (in_sizes[i] - 1) * s + adj + (kernel[i] - 1) * d + 1
            if requested or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                total = max(0, full - (requested[i] if requested else in_sizes[i] * s))
                out = requested[i] if requested else full - total
                begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            else:
                begin, end = (0, 0) if auto_pad == "VALID" else (pads[i], pads[i + spatial])
                out = full - begin - end
            begins.append(begin)
            outs.append(out)
        return begins, outs

    @classmethod
    def infer(cls, operands, attrs):
        require(len(operands) in (2, 3), f"expects input, weight and an optional bias, got {len(operands)} operands")
        x, w = operands[:2]
        require_float(x, "input")
        same_dtype(operands)
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        require(w.rank == x.rank, f"weight must have the input's rank {x.rank}, got {w}")
        spatial = x.rank - 2
        _check_window_attrs(spatial, attrs, attrs["kernel_shape"])
        require(
            list(attrs["kernel_shape"]) == list(w.shape[2:]),
            f"kernel_shape {list(attrs['kernel_shape'])} does not match the weight's spatial shape {list(w.shape[2:])}",
        )
        group = attrs["group"]
        require(group >= 1, f"group must be positive, got {group}")
        require(x.shape[1] == w.shape[0], f"input channels {x.shape[1]} must equal the weight's first dimension {w.shape[0]}")
        require(x.shape[1] % group == 0, f"input channels {x.shape[1]} must be divisible by group {group}")
        features = w.shape[1] * group
        if len(operands) == 3:
            require(operands[2].shape == (features,), f"bias must have shape ({features},), got {operands[2]}")
        adj = attrs["output_padding"]
        require(len(adj) == spatial, f"output_padding {list(adj)} must have {spatial} entries")
        for a, s, d in zip(adj, attrs["strides"], attrs["dilations"]):
            require(0 <= a < max(s, d), f"output_padding {list(adj)} must be non-negative and below the stride or dilation")
        requested = list(attrs["output_shape"])
        require(
            len(requested) in (0, spatial),
            f"output_shape {requested} must be empty or have {spatial} entries (one per spatial dimension)",
        )
        _, outs = cls.geometry(operands, attrs)
        require(all(o >= 1 for o in outs), f"output spatial shape {outs} must be positive")
        if requested:
            # Past the full size the result is zero-extended, by less than a stride (the
            # outputs a Conv with this stride maps back to the input size; ONNX Runtime's rule).
            largest = [
                max((i - 1) * s + a, i * s - 1) + (k - 1) * d + 1
                for i, s, a, k, d in zip(x.shape[2:], attrs["strides"], adj, w.shape[2:], attrs["dilations"])
            ]
            require(
                all(r <= f for r, f in zip(requested, largest)),
                f"output_shape {requested} exceeds the largest output size {largest} for this input, stride and kernel",
            )
        return [TensorSpec((x.shape[0], features, *outs), x.dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        x, w = operands[:2]
        macs = x.numel * w.shape[1] * prod(w.shape[2:])
        return 2 * macs + (results[0].numel if len(operands) == 3 else 0)

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, w = inputs[:2]
        bias = inputs[2] if len(inputs) == 3 else None
        begins, outs = cls.geometry([TensorSpec.of(x), TensorSpec.of(w)], attrs)
        y = reference_windows.conv_transpose(x, w, bias, begins, attrs["strides"], attrs["dilations"], attrs["group"], outs)
        return [y]


# ----- matrix products -----


def _broadcasts_to(shape, target) -> bool:
    """Whether ``shape`` broadcasts unidirectionally to ``target``."""
    if len(shape) > len(target):
        return False
    return all(d in (1, t) for d, t in zip(shape[::-1], target[::-1]))


def _require_numeric(spec: TensorSpec, what: str):
    require(spec.dtype.kind in "fiu", f"{what} must have a numeric element type, got {spec}")


class GemmOp(ECGOp, name="gemm"):
    """alpha * A' @ B' + beta * C with A' = A or A^T, B' = B or B^T; C broadcasts to (M, N)."""

    a: Tensor
    b: Tensor
    output: TensorResult
    alpha: Float
    beta: Float
    transA: Int
    transB: Int
    c: Optional[Tensor] = None
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = Algebra(distributes_over=("add", "sub"))
    ONNX = ("Gemm",)
    DEFAULTS = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}

    @classmethod
    def infer(cls, operands, attrs):
        require(len(operands) in (2, 3), f"expects A, B and an optional C, got {len(operands)} operands")
        a, b = operands[:2]
        _require_numeric(a, "A")
        dtype = same_dtype(operands)
        require(a.rank == 2, f"A must have rank 2, got {a}")
        require(b.rank == 2, f"B must have rank 2, got {b}")
        m, k = a.shape[::-1] if attrs["transA"] else a.shape
        k2, n = b.shape[::-1] if attrs["transB"] else b.shape
        require(k == k2, f"inner dimensions do not match: A' is {m}x{k}, B' is {k2}x{n}")
        if len(operands) == 3:
            c = operands[2]
            require(_broadcasts_to(c.shape, (m, n)), f"C {c} must broadcast to the result shape ({m}, {n})")
        return [TensorSpec((m, n), dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        a = operands[0]
        k = a.shape[0] if attrs["transA"] else a.shape[1]
        return 2 * results[0].numel * k + (2 * results[0].numel if len(operands) == 3 else 0)

    @classmethod
    def reference(cls, inputs, attrs, results):
        a, b = inputs[:2]
        dtype = results[0].dtype
        ctype = np.float32 if dtype == np.float16 else dtype
        a = (a.T if attrs["transA"] else a).astype(ctype, copy=False)
        b = (b.T if attrs["transB"] else b).astype(ctype, copy=False)
        y = a @ b
        if attrs["alpha"] != 1.0:
            y = y * np.array(attrs["alpha"]).astype(ctype)
        if len(inputs) == 3 and attrs["beta"] != 0.0:
            c = inputs[2].astype(ctype, copy=False)
            y = y + (c if attrs["beta"] == 1.0 else c * np.array(attrs["beta"]).astype(ctype))
        return [np.asarray(y).astype(dtype, copy=False)]


class MatMulOp(ECGOp, name="mat_mul"):
    """numpy matmul: batch dimensions broadcast, 1-D operands are promoted and squeezed."""

    lhs: Tensor
    rhs: Tensor
    output: TensorResult
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = Algebra(distributes_over=("add", "sub"))
    ONNX = ("MatMul",)

    @classmethod
    def infer(cls, operands, attrs):
        a, b = operands
        _require_numeric(a, "lhs")
        dtype = same_dtype(operands)
        require(a.rank >= 1 and b.rank >= 1, f"operands must have rank >= 1, got {a} and {b}")
        a_shape = (1,) + a.shape if a.rank == 1 else a.shape
        b_shape = b.shape + (1,) if b.rank == 1 else b.shape
        require(
            a_shape[-1] == b_shape[-2],
            f"inner dimensions do not match: lhs {a} has {a_shape[-1]} columns, rhs {b} has {b_shape[-2]} rows",
        )
        batch = broadcast(a_shape[:-2], b_shape[:-2])
        shape = batch + (a_shape[-2],) * (a.rank > 1) + (b_shape[-1],) * (b.rank > 1)
        return [TensorSpec(shape, dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return 2 * results[0].numel * operands[0].shape[-1]

    @classmethod
    def reference(cls, inputs, attrs, results):
        a, b = inputs
        dtype = results[0].dtype
        if dtype == np.float16:
            a, b = a.astype(np.float32), b.astype(np.float32)
        return [np.asarray(np.matmul(a, b)).astype(dtype, copy=False)]


# ----- pooling -----


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
        spatial = _spatial_defaults(operands, "strides", "dilations", "pads")
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
        require(x.dtype.kind in cls.KINDS, f"input must not have element type {dtype_name(x.dtype)}")
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        _check_window_attrs(x.rank - 2, attrs, attrs["kernel_shape"])
        require(attrs["ceil_mode"] in (0, 1), f"ceil_mode must be 0 or 1, got {attrs['ceil_mode']}")
        if attrs["auto_pad"] == "NOTSET":
            kernel, pads = list(attrs["kernel_shape"]), list(attrs["pads"])
            require(
                all(p < k for p, k in zip(pads, kernel + kernel)),
                f"pads {pads} must be smaller than kernel_shape {kernel} (a window would lie in the padding only)",
            )
        outs = _require_outputs(x.shape[2:], attrs["kernel_shape"], attrs["dilations"], cls.geometry(x, attrs))
        return [TensorSpec(x.shape[:2] + tuple(outs), x.dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        begins, ends, _ = cls.geometry(operands[0], attrs)
        return results[0].numel * prod(
            reachable_kernel(operands[0].shape[2:], begins, ends, attrs["kernel_shape"], attrs["dilations"]))


class MaxPoolOp(_WindowPool, name="max_pool"):
    """Max over each window (padding excluded). Only ONNX's first output (no Indices)."""

    storage_order: Int
    ALGEBRA = Algebra(commutes_with=_MONOTONE)
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
    ALGEBRA = Algebra(commutes_with=_LINEAR)
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
        require(x.dtype.kind in cls.KINDS, f"input must not have element type {dtype_name(x.dtype)}")
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

    ALGEBRA = Algebra(commutes_with=_LINEAR)
    ONNX = ("GlobalAveragePool",)

    @staticmethod
    def compute(x, axes):
        ctype = np.float32 if x.dtype == np.float16 else x.dtype
        return np.mean(x, axis=axes, keepdims=True, dtype=ctype)


class GlobalMaxPoolOp(_GlobalPool, name="global_max_pool"):
    """Max over all spatial dimensions, keeping them as size 1."""

    ALGEBRA = Algebra(commutes_with=_MONOTONE)
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


# ----- softmax -----


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
        if dtype == np.float16:
            x = x.astype(np.float32)
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


# ----- reductions -----


class ReduceOp(ECGOp):
    """Reduce ``axes`` (empty: all axes, or none with noop_with_empty_axes), keeping them if keepdims."""

    input: Tensor
    output: TensorResult
    keepdims: Int
    noop_with_empty_axes: Int
    axes: Ints
    MAPPING = MappingType.MANY_TO_MANY
    FLOPS_PER_INPUT = 1
    KINDS = "f"
    # Whether an empty reduced axis is allowed (it is not for max/min: no identity element).
    EMPTY_OK = True
    DEFAULTS = {"axes": [], "keepdims": 1, "noop_with_empty_axes": 0}

    @classmethod
    def reduced_axes(cls, rank, attrs):
        """The normalized reduced axes; none with empty axes and noop_with_empty_axes.

        Reducing no axes still applies the op's elementwise parts (ONNX Runtime:
        ReduceSumSquare gives x*x, ReduceL1 |x|, ReduceLogSum log(x)).
        """
        axes = list(attrs["axes"])
        if not axes:
            return [] if attrs["noop_with_empty_axes"] else list(range(rank))
        return sorted(normalize_axes(axes, rank))

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(x.dtype.kind in cls.KINDS, f"input must not have element type {dtype_name(x.dtype)}")
        require(attrs["keepdims"] in (0, 1), f"keepdims must be 0 or 1, got {attrs['keepdims']}")
        require(
            attrs["noop_with_empty_axes"] in (0, 1),
            f"noop_with_empty_axes must be 0 or 1, got {attrs['noop_with_empty_axes']}",
        )
        axes = cls.reduced_axes(x.rank, attrs)
        for a in axes:
            require(x.shape[a] > 0 or cls.EMPTY_OK, f"cannot reduce the empty axis {a} of {x}")
        if attrs["keepdims"]:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return [x.with_shape(shape)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return cls.FLOPS_PER_INPUT * operands[0].numel

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        dtype = results[0].dtype
        axes = cls.reduced_axes(x.ndim, attrs)
        if dtype == np.float16:
            x = x.astype(np.float32)
        with np.errstate(all="ignore"):
            y = cls.compute(x, tuple(axes), bool(attrs["keepdims"]))
        return [np.asarray(y).astype(dtype, copy=False).reshape(results[0].shape)]


def _reduce(name, onnx, compute, doc, *, kinds="f", flops=1, algebra=None, empty_ok=True):
    namespace = {
        "__doc__": doc,
        "ONNX": (onnx,),
        "compute": staticmethod(compute),
        "KINDS": kinds,
        "FLOPS_PER_INPUT": flops,
        "EMPTY_OK": empty_ok,
    }
    if algebra is not None:
        namespace["ALGEBRA"] = algebra
    class_name = "".join(part.title() for part in name.split("_")) + "Op"
    return type(class_name, (ReduceOp,), namespace, name=name)


def _sum(x, axes, keepdims):
    return np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


ReduceSumOp = _reduce(
    "reduce_sum", "ReduceSum", _sum, "Sum over the axes.", kinds="fiu", algebra=Algebra(commutes_with=_LINEAR)
)
ReduceMeanOp = _reduce(
    "reduce_mean", "ReduceMean", lambda x, axes, keepdims: np.mean(x, axis=axes, keepdims=keepdims),
    "Mean over the axes.", algebra=Algebra(commutes_with=_LINEAR),
)
ReduceMaxOp = _reduce(
    "reduce_max", "ReduceMax", lambda x, axes, keepdims: np.max(x, axis=axes, keepdims=keepdims),
    "Maximum over the axes.", kinds="fiub", algebra=Algebra(commutes_with=_MONOTONE), empty_ok=False,
)
ReduceMinOp = _reduce(
    "reduce_min", "ReduceMin", lambda x, axes, keepdims: np.min(x, axis=axes, keepdims=keepdims),
    "Minimum over the axes.", kinds="fiub", algebra=Algebra(commutes_with=_MONOTONE), empty_ok=False,
)
ReduceProdOp = _reduce(
    "reduce_prod", "ReduceProd", lambda x, axes, keepdims: np.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Product over the axes.", kinds="fiu",
    algebra=Algebra(commutes_with=("abs", "sqrt", "reciprocal", "square", "sign")),
)
ReduceL1Op = _reduce(
    "reduce_l1", "ReduceL1", lambda x, axes, keepdims: np.sum(np.abs(x), axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Sum of absolute values over the axes.", kinds="fiu", flops=2,
)
ReduceL2Op = _reduce(
    "reduce_l2", "ReduceL2", lambda x, axes, keepdims: np.sqrt(np.sum(np.square(x), axis=axes, keepdims=keepdims)),
    "Euclidean norm over the axes.", flops=2,
)
ReduceSumSquareOp = _reduce(
    "reduce_sum_square", "ReduceSumSquare",
    lambda x, axes, keepdims: np.sum(np.square(x), axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Sum of squares over the axes.", kinds="fiu", flops=2,
)
ReduceLogSumOp = _reduce(
    "reduce_log_sum", "ReduceLogSum", lambda x, axes, keepdims: np.log(np.sum(x, axis=axes, keepdims=keepdims)),
    "Logarithm of the sum over the axes.",
)


def _log_sum_exp(x, axes, keepdims):
    peak = np.max(x, axis=axes, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    y = np.log(np.sum(np.exp(x - peak), axis=axes, keepdims=True)) + peak
    return y if keepdims else np.squeeze(y, axis=axes)


ReduceLogSumExpOp = _reduce(
    "reduce_log_sum_exp", "ReduceLogSumExp", _log_sum_exp, "log(sum(exp(x))) over the axes (computed stably).",
    flops=3, empty_ok=False,
)


class _ArgReduce(ECGOp):
    input: Tensor
    output: TensorResult
    axis: Int
    keepdims: Int
    select_last_index: Int
    MAPPING = MappingType.MANY_TO_MANY
    DEFAULTS = {"axis": 0, "keepdims": 1, "select_last_index": 0}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(x.dtype.kind in "fiu", f"input must have a numeric element type, got {x}")
        require(x.rank >= 1, f"input must have rank >= 1, got {x}")
        axis = normalize_axis(attrs["axis"], x.rank)
        require(x.shape[axis] > 0, f"cannot take the {cls.ONNX[0]} of the empty axis {axis} of {x}")
        require(attrs["keepdims"] in (0, 1), f"keepdims must be 0 or 1, got {attrs['keepdims']}")
        require(
            attrs["select_last_index"] in (0, 1), f"select_last_index must be 0 or 1, got {attrs['select_last_index']}"
        )
        shape = list(x.shape)
        if attrs["keepdims"]:
            shape[axis] = 1
        else:
            del shape[axis]
        return [TensorSpec(shape, np.int64)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return operands[0].numel

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        axis = normalize_axis(attrs["axis"], x.ndim)
        if attrs["select_last_index"]:
            last = x.shape[axis] - 1
            index = last - cls.compute(np.flip(x, axis=axis), axis=axis)
        else:
            index = cls.compute(x, axis=axis)
        if attrs["keepdims"]:
            index = np.expand_dims(index, axis)
        return [np.asarray(index, dtype=np.int64)]


class ArgMaxOp(_ArgReduce, name="arg_max"):
    """Index (int64) of the maximum along ``axis``; the first one unless select_last_index."""

    ONNX = ("ArgMax",)
    compute = staticmethod(np.argmax)


class ArgMinOp(_ArgReduce, name="arg_min"):
    """Index (int64) of the minimum along ``axis``; the first one unless select_last_index."""

    ONNX = ("ArgMin",)
    compute = staticmethod(np.argmin)


# ----- normalizations -----


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
                _broadcasts_to(spec.shape, normalized), f"{name} {spec} must broadcast to the normalized shape {normalized}"
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
        ctype = np.float32 if dtype == np.float16 else dtype
        xc = x.astype(ctype, copy=False)
        axes = tuple(range(2, x.ndim))
        mean = np.mean(xc, axis=axes, keepdims=True)
        centered = xc - mean
        var = np.mean(np.square(centered), axis=axes, keepdims=True)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        y = centered / np.sqrt(var + np.array(attrs["epsilon"], ctype))
        y = y * scale.astype(ctype).reshape(shape) + bias.astype(ctype).reshape(shape)
        return [y.astype(dtype, copy=False)]
