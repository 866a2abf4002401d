"""Window geometry of the windowed ops (convolution.py, pooling.py): attribute
defaults and checks, and ``window_geometry``.

``window_geometry`` resolves ``auto_pad``/``pads``/``ceil_mode`` into explicit
begin/end pads and output sizes as ONNX (spec and shape inference) and ONNX
Runtime do; the ops' ``infer`` and ``reference`` both use it, and the numpy
implementations live in ``ecg/reference_windows.py``.
"""

from ..shapes import require

_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def spatial_defaults(operands, *names) -> dict:
    """Per-spatial-dimension defaults (strides/dilations 1, pads 0) from the input rank."""
    spatial = max(operands[0].rank - 2, 0) if operands else 0
    values = {"strides": [1] * spatial, "dilations": [1] * spatial, "pads": [0] * (2 * spatial)}
    return {name: values[name] for name in names}


def check_window_attrs(spatial: int, attrs: dict, kernel):
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


def require_outputs(in_sizes, kernel, dilations, geometry):
    """Every spatial output size must be positive: the window must fit the padded input."""
    begins, ends, outs = geometry
    for i, (size, k, d, b, e, out) in enumerate(zip(in_sizes, kernel, dilations, begins, ends, outs)):
        require(
            out >= 1,
            f"spatial dimension {i} of size {size} (padded {size + b + e}) is smaller than the window extent "
            f"{(k - 1) * d + 1}; the output size would be {out}",
        )
    return outs
