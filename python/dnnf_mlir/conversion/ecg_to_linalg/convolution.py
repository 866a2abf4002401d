"""Convolutions of any rank and grouping onto linalg's 2-d NCHW convolutions.

The code generators schedule three named ops: ``conv_2d_nchw_fchw`` (group 1),
``depthwise_conv_2d_nchw_chw`` (one input and one output channel per group) and
``conv_2d_ngchw_gfchw`` (other groups). ``convolve`` brings every convolution to
one of them: a 1-d convolution is a 2-d one of height 1 (reshapes, no copy); a
leading spatial axis with a unit window and stride merges into the next one when
that has them too (a 1x1x1 convolution is a 2-d 1x1 one); any other leading axis
is folded, its output positions into the batch and its window into the channels
of each group: the input's KD slices along it, transposed to
``(N * OD, G * KD * C/G, ...)``, the weights to ``(M, KD * C/G, ...)``, and the
result transposed back (copies of KD x the input and of the output, small next to
the convolution's work). A 3-d convolution is thus one 2-d convolution with a
reduction KD times longer. A depthwise 3-d one of depth stride 1 has no reduction to
lengthen (one channel per group): its depth slices are stacked as rows instead
(``_stack_depth_in_rows``), without a copy. ``conv_transpose.py`` reuses
``convolve`` for each phase of a transposed convolution.
"""

from ... import _mlir
from ...linalg_builders import element_of, insert_at
from .builders import (
    add, broadcast_to, elementwise, extract_slice, pad, reshape, shape_of, tensor_type, transpose, zeros,
)
from .registry import lowers

_CONV = "conv_2d_nchw_fchw"
_DEPTHWISE = "depthwise_conv_2d_nchw_chw"
_GROUPED = "conv_2d_ngchw_gfchw"


def _out_size(size: int, kernel: int, stride: int, dilation: int) -> int:
    return (size - (kernel - 1) * dilation - 1) // stride + 1


def _convolve_2d(x, w, strides, dilations, group):
    linalg = _mlir.linalg
    n, c, h, width = shape_of(x)
    m, _, kh, kw = shape_of(w)
    out = (_out_size(h, kh, strides[0], dilations[0]), _out_size(width, kw, strides[1], dilations[1]))
    options = {"strides": list(strides), "dilations": list(dilations)}
    element = element_of(x)
    if group == 1:
        return linalg.conv_2d_nchw_fchw(x, w, outs=[zeros((n, m) + out, element)], **options)
    if group == c == m:
        w = reshape(w, (m, kh, kw))
        return linalg.depthwise_conv_2d_nchw_chw(x, w, outs=[zeros((n, m) + out, element)], **options)
    xg = reshape(x, (n, group, c // group, h, width))
    wg = reshape(w, (group, m // group, c // group, kh, kw))
    y = linalg.conv_2d_ngchw_gfchw(xg, wg, outs=[zeros((n, group, m // group) + out, element)], **options)
    return reshape(y, (n, m) + out)


def _merge_leading_axis(x, w, strides, dilations, group):
    """Axes 2 and 3 as one: both have a unit window and stride."""
    n, c, d, h, *rest = shape_of(x)
    m, cg, _, _, *kernel = shape_of(w)
    y = convolve(reshape(x, (n, c, d * h, *rest)), reshape(w, (m, cg, 1, *kernel)), strides[1:], dilations[1:], group)
    return reshape(y, (n, m, d, h, *shape_of(y)[3:]))


def _fold_leading_axis(x, w, strides, dilations, group):
    """The first spatial axis folded into the batch (output positions) and the
    channels of each group (window taps)."""
    n, c, d, *rest = shape_of(x)
    m, cg, kd, *kernel = shape_of(w)
    stride, dilation = strides[0], dilations[0]
    od = _out_size(d, kd, stride, dilation)
    unit = [1] * len(rest)
    taps = [
        reshape(extract_slice(x, [0, 0, t * dilation] + [0] * len(rest), [n, c, od, *rest], [1, 1, stride] + unit),
                (n, group, 1, cg, od, *rest))
        for t in range(kd)
    ]
    stacked = taps[0] if kd == 1 else _mlir.tensor.concat(
        tensor_type([n, group, kd, cg, od, *rest], element_of(x)), 2, taps)
    spatial = list(range(5, 5 + len(rest)))
    folded = reshape(transpose(stacked, [0, 4, 1, 2, 3] + spatial), (n * od, group * kd * cg, *rest))
    weights = reshape(transpose(w, [0, 2, 1] + list(range(3, 3 + len(kernel)))), (m, kd * cg, *kernel))
    y = convolve(folded, weights, strides[1:], dilations[1:], group)
    out = shape_of(y)[2:]
    return transpose(reshape(y, (n, od, m, *out)), [0, 2, 1] + list(range(3, 3 + len(out))))


def _stacks_depth_in_rows(x, w, strides, group) -> bool:
    """Whether ``_stack_depth_in_rows`` takes this 3-d convolution."""
    (_, c, _, h, _), m = shape_of(x), shape_of(w)[0]
    return group == c == m and strides[0] == 1 and h % strides[1] == 0


def _stack_depth_in_rows(x, w, strides, dilations, bias=None):
    """A depthwise 3-d convolution of depth stride 1 as KD depthwise 2-d ones, one per
    depth tap, accumulated: the input's D slices of H rows read as one image of D * H
    rows (a reshape), tap t's rows starting at slice t * dilation, the output's slices
    H / SH rows apart, of which the first OH are kept (the others straddle two slices:
    computed, never read). A ``bias`` (C) is the accumulators' initial value: added
    after it, it would be a pass of its own over the output (nothing fuses it through
    the slicing). Folded into the batch instead (``_fold_leading_axis``), the
    input was copied KD times and each group's KD channels again per group; measured
    (one thread, per-kernel profile, interleaved), 32x8x28x28 3x3x3 + bias took 0.63 ->
    0.26 ms on AVX-512 and 0.75 -> 0.38 ms on AVX2 (onnxruntime: 1.4 ms)."""
    linalg = _mlir.linalg
    n, c, d, h, width = shape_of(x)
    _, _, kd, kh, kw = shape_of(w)
    od = _out_size(d, kd, 1, dilations[0])
    oh = _out_size(h, kh, strides[1], dilations[1])
    ow = _out_size(width, kw, strides[2], dilations[2])
    per_slice = h // strides[1]
    rows = (od - 1) * per_slice + oh
    read = (rows - 1) * strides[1] + (kh - 1) * dilations[1] + 1
    image = reshape(x, (n, c, d * h, width))
    stacked_shape = (n, c, od * per_slice, ow)
    stacked = zeros(stacked_shape, element_of(x)) if bias is None else \
        broadcast_to(reshape(bias, (c, 1, 1)), stacked_shape)
    y = extract_slice(stacked, [0, 0, 0, 0], [n, c, rows, ow])
    for tap in range(kd):
        taps = extract_slice(image, [0, 0, tap * dilations[0] * h, 0], [n, c, read, width])
        weights = reshape(extract_slice(w, [0, 0, tap, 0, 0], [c, 1, 1, kh, kw]), (c, kh, kw))
        y = linalg.depthwise_conv_2d_nchw_chw(taps, weights, outs=[y], strides=list(strides[1:]),
                                              dilations=list(dilations[1:]))
    slices = reshape(insert_at(y, stacked, [0, 0, 0, 0]), (n, c, od, per_slice, ow))
    return extract_slice(slices, [0] * 5, [n, c, od, oh, ow])


def convolve(x, w, strides, dilations, group):
    """The convolution (cross-correlation) of the padded input ``x`` (N, C, *spatial)
    with ``w`` (M, C / group, *kernel), into zeros: (N, M, *out)."""
    spatial = len(shape_of(x)) - 2
    if spatial == 2:
        return _convolve_2d(x, w, strides, dilations, group)
    if spatial == 1:
        (n, c, width), (m, cg, k) = shape_of(x), shape_of(w)
        y = _convolve_2d(reshape(x, (n, c, 1, width)), reshape(w, (m, cg, 1, k)), [1, *strides], [1, *dilations], group)
        return reshape(y, (n, m, shape_of(y)[3]))
    kernel = shape_of(w)[2:]
    if kernel[0] == kernel[1] == 1 and strides[0] == strides[1] == 1:
        return _merge_leading_axis(x, w, strides, dilations, group)
    if spatial == 3 and _stacks_depth_in_rows(x, w, strides, group):
        return _stack_depth_in_rows(x, w, strides, dilations)
    return _fold_leading_axis(x, w, strides, dilations, group)


@lowers("conv")
def lower_conv(op, args):
    """Pad (tensor.pad), then ``convolve``; the bias is an element-wise add after it,
    which the code generator fuses into the convolution's tiles as it fuses any
    epilogue (a broadcast bias as the accumulator's initial value was a kernel of
    its own), except a depthwise 3-d one stacked in rows, which starts from it."""
    attrs = op.attrs
    x, w = args[:2]
    specs = op.operand_specs
    (spec,) = op.result_specs
    spatial = len(specs[1].shape) - 2
    begins, ends, _ = type(op).geometry(specs, attrs)
    x = pad(x, [0, 0] + list(begins), [0, 0] + list(ends), 0.0)
    strides, dilations = [int(s) for s in attrs["strides"]], [int(d) for d in attrs["dilations"]]
    if spatial == 3 and _stacks_depth_in_rows(x, w, strides, attrs["group"]):
        return [_stack_depth_in_rows(x, w, strides, dilations, args[2] if len(args) == 3 else None)]
    y = convolve(x, w, strides, dilations, attrs["group"])
    if len(args) == 3:
        bias = reshape(args[2], (spec.shape[1],) + (1,) * spatial)
        y = elementwise([y, bias], spec.shape, element_of(x), add)
    return [y]


__all__ = ["convolve", "lower_conv"]
