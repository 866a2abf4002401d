"""Convolutions: ``conv`` onto linalg's named convolution ops over an explicitly padded input.

Plain, depthwise (group == channels) and 2-d grouped convolutions each have a named
op (``conv_*_nchw_fchw``, ``depthwise_conv_*_nchw_chw``, ``conv_2d_ngchw_gfchw``);
other grouped convolutions are unsupported.
"""

from ... import _mlir
from ...linalg_builders import element_of
from .builders import add, elementwise, pad, reshape, shape_of, window_options, zeros
from .registry import Unsupported, lowers

_CONVS = {1: "conv_1d_ncw_fcw", 2: "conv_2d_nchw_fchw", 3: "conv_3d_ncdhw_fcdhw"}
_DEPTHWISE = {1: "depthwise_conv_1d_ncw_cw", 2: "depthwise_conv_2d_nchw_chw", 3: "depthwise_conv_3d_ncdhw_cdhw"}


@lowers("conv")
def lower_conv(op, args):
    """Pad (tensor.pad), then conv_*_nchw_fchw / depthwise_conv_*_nchw_chw /
    conv_2d_ngchw_gfchw into zeros; the bias is an element-wise add after it, which
    the code generator fuses into the convolution's tiles as it fuses any epilogue (a
    broadcast bias as the accumulator's initial value was a kernel of its own)."""
    linalg = _mlir.linalg
    attrs = op.attrs
    x, w = args[:2]
    specs = op.operand_specs
    (spec,) = op.result_specs
    n, c = specs[0].shape[:2]
    m = specs[1].shape[0]
    kernel = specs[1].shape[2:]
    spatial = len(kernel)
    group = attrs["group"]
    element = element_of(x)
    depthwise = group > 1 and group == c and m == c
    if spatial not in _CONVS:
        raise Unsupported(f"{spatial}-d convolution")
    if group > 1 and not depthwise and spatial != 2:
        raise Unsupported(f"grouped {spatial}-d convolution (group {group}) other than depthwise")
    begins, ends, outs = type(op).geometry(specs, attrs)
    x = pad(x, [0, 0] + list(begins), [0, 0] + list(ends), 0.0)
    options = window_options(attrs)
    if depthwise:
        w = reshape(w, (m,) + tuple(kernel))
        y = getattr(linalg, _DEPTHWISE[spatial])(x, w, outs=[zeros(spec.shape, element)], **options)
    elif group == 1:
        y = getattr(linalg, _CONVS[spatial])(x, w, outs=[zeros(spec.shape, element)], **options)
    else:
        padded = shape_of(x)
        xg = reshape(x, (n, group, c // group) + padded[2:])
        wg = reshape(w, (group, m // group) + tuple(specs[1].shape[1:]))
        init = zeros((n, group, m // group, *outs), element)
        y = reshape(linalg.conv_2d_ngchw_gfchw(xg, wg, outs=[init], **options), spec.shape)
    if len(args) == 3:
        bias = reshape(args[2], (m,) + (1,) * spatial)
        y = elementwise([y, bias], spec.shape, element, add)
    return [y]
