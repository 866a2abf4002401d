"""Many-to-Many convolutions: conv and conv_transpose, N-d and grouped.

Their padding and output sizes come from the shared window geometry (windows.py);
the numpy implementations are in ``ecg/reference_windows.py``.
"""

from math import prod
from typing import Optional

import numpy as np

from .. import reference_windows
from ..attributes import Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import require, require_float, same_dtype
from ..tensor_spec import TensorSpec
from .windows import check_window_attrs, require_outputs, spatial_defaults, window_geometry


class ConvOp(ECGOp, name="conv"):
    """N-d grouped convolution (cross-correlation) of (N, C, *spatial) with (M, C/group, *kernel);
    float, or int32 (ConvInteger's exact accumulation where f32 would round)."""

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
        defaults = {"auto_pad": "NOTSET", "group": 1, **spatial_defaults(operands, "strides", "dilations", "pads")}
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
        require(x.is_float or x.dtype == np.int32, f"input must be float or int32, got {x}")
        same_dtype(operands)
        require(x.rank >= 3, f"input must have rank >= 3 (N, C, spatial...), got {x}")
        require(w.rank == x.rank, f"weight must have the input's rank {x.rank}, got {w}")
        spatial = x.rank - 2
        check_window_attrs(spatial, attrs, attrs["kernel_shape"])
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
        outs = require_outputs(x.shape[2:], w.shape[2:], attrs["dilations"], cls.geometry(operands, attrs))
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
            **spatial_defaults(operands, "strides", "dilations", "pads"),
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
        check_window_attrs(spatial, attrs, attrs["kernel_shape"])
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
