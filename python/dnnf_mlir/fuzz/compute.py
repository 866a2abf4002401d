"""Compute op families: MatMul and Gemm (matrices, batches, vectors), Conv and
ConvTranspose, sibling contractions of one input, self-attention, pooling with
random strides, pads, dilations and groups, reductions over random axes,
Softmax/LogSoftmax and the normalizations.

A contraction is often followed by the epilogue the code generator fuses into its
output tile (bias, activation, residual add), and a row op (Softmax, LayerNorm)
by the element-wise neighbours that join its row group. Weights are scaled by
1/sqrt(fan-in) so that products keep their input's magnitude.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .draws import DIMS, MAX_NUMEL, axis, broadcast, constant, dims, partner, pick, weight
from .elementwise import positive
from .graph import FLOAT, GraphBuilder, Value

MAX_MACS = 1 << 22  # multiply-adds per contraction: the interpreter and onnxruntime run each graph too
SPATIAL = DIMS[:8]  # spatial extents of convolutions and pools: up to 17
# Normalizations divide by sqrt(variance + epsilon): a row of equal values (a max pool's
# or an expand's) has a variance of rounding noise, which a small epsilon amplifies past
# any tolerance (two LayerNorms at 1e-5 and 1e-3 turned a 1e-8 rounding difference between
# the interpreter and onnxruntime into 2e-4). These bound the amplification to 10.
EPSILONS = (1e-2, 1e-1)
ACTIVATIONS = ("Relu", "Sigmoid", "Tanh", "Gelu", "LeakyRelu")
REDUCTIONS = {
    "ReduceSum": lambda s, n: s * math.sqrt(n), "ReduceMean": lambda s, n: s, "ReduceMax": lambda s, n: 2 * s,
    "ReduceMin": lambda s, n: 2 * s, "ReduceL1": lambda s, n: s * n, "ReduceL2": lambda s, n: s * math.sqrt(n),
    "ReduceSumSquare": lambda s, n: s * s * n, "ReduceLogSumExp": lambda s, n: s + math.log(n),
    "ReduceProd": lambda s, n: s**n, "ReduceLogSum": lambda s, n: 1 + math.log(n),
}


def bias(draw, g: GraphBuilder, y: Value, channel: int) -> Value:
    """``y`` plus a constant along its axis ``channel`` (broadcast over the axes after it)."""
    shape = tuple(y.shape[i] if i == channel % y.rank else 1 for i in range(channel % y.rank, y.rank))
    return g.one("Add", [y, constant(draw, g, shape)], y.shape, scale=math.hypot(y.scale, 1))


def epilogue(draw, g: GraphBuilder, y: Value, channel: int) -> None:
    """What often follows a contraction: a bias along ``channel``, an activation, a residual add."""
    steps = draw(st.integers(0, 3))
    if steps >= 1:
        y = bias(draw, g, y, channel)
    if steps >= 2:
        op_type = draw(st.sampled_from(ACTIVATIONS))
        y = g.one(op_type, [y], y.shape, scale=y.scale)
    if steps >= 3:  # the residual may broadcast (a row, a column, a scalar)
        other = partner(draw, g, y.shape)
        g.one("Add", [y, other], broadcast(y.shape, other.shape), scale=math.hypot(y.scale, other.scale))


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """numpy.matmul's result shape (1-D operands promoted, then their unit dim dropped)."""
    a2, b2 = (a if len(a) > 1 else (1,) + a), (b if len(b) > 1 else b + (1,))
    out = broadcast(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def matmul(draw, g: GraphBuilder) -> None:
    a = pick(draw, g, lambda v: v.numel * 2 <= MAX_NUMEL)
    k = a.shape[-1]
    rows = a.numel // k

    def fits(shape):
        try:
            out = matmul_shape(a.shape, shape)
        except ValueError:
            return False
        return math.prod(out) <= MAX_NUMEL and math.prod(out) * k <= MAX_MACS

    kind = draw(st.sampled_from(("weights", "vector", "batched", "activations")))
    b = None
    if kind == "activations":
        found = [v for v in reversed(g.values) if v.is_float and v.rank >= 2 and v.shape[-2] == k and fits(v.shape)]
        b = g.normalized(found[draw(st.integers(0, len(found) - 1))]) if found else None
    if b is None:
        n = draw(st.sampled_from([d for d in DIMS if rows * d <= MAX_NUMEL and rows * d * k <= MAX_MACS] or [1]))
        shape = (k,) if kind == "vector" else (k, n)
        if kind == "batched" and a.rank >= 3 and fits(a.shape[-3:-2] + shape):
            shape = a.shape[-3:-2] + shape
        b = weight(draw, g, shape, k)
    out = matmul_shape(a.shape, b.shape)
    y = g.one("MatMul", [a, b], out, scale=a.scale * b.scale * math.sqrt(k))
    if y.rank:
        epilogue(draw, g, y, -1)


def gemm(draw, g: GraphBuilder) -> None:
    a = pick(draw, g, lambda v: v.rank == 2, lambda d, g: g.input(dims(d, 2, cap=MAX_NUMEL // 16)))
    trans_a, trans_b = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    m, k = a.shape[::-1] if trans_a else a.shape
    n = draw(st.sampled_from([d for d in DIMS if m * d <= MAX_NUMEL and m * d * k <= MAX_MACS] or [1]))
    b = weight(draw, g, (n, k) if trans_b else (k, n), k)
    alpha, beta = draw(st.sampled_from((1.0, 0.5, -2.0))), draw(st.sampled_from((1.0, 0.5, -2.0)))
    inputs = [a, b]
    if draw(st.booleans()):
        inputs.append(constant(draw, g, draw(st.sampled_from(((), (n,), (1, n), (m, 1), (m, n))))))
    scale = abs(alpha) * a.scale * b.scale * math.sqrt(k) + abs(beta)
    y = g.one("Gemm", inputs, (m, n), scale=scale, alpha=alpha, beta=beta, transA=trans_a, transB=trans_b)
    epilogue(draw, g, y, -1)


def image(draw, g: GraphBuilder) -> Value:
    """A new NCHW (or NCW) input of convolution-sized extents."""
    rank = draw(st.sampled_from((4, 3)))
    return g.input((draw(st.sampled_from((1, 2))),) + dims(draw, rank - 1, cap=MAX_NUMEL // 2, choices=SPATIAL))


def is_image(v: Value) -> bool:
    return v.rank in (3, 4) and v.shape[1] <= 65 and all(d <= 65 for d in v.shape[2:])


def volume(draw, g: GraphBuilder) -> Value:
    """A new NCDHW input (3-d convolutions; pooling has no 3-d lowering)."""
    return g.input((draw(st.sampled_from((1, 2))),) + dims(draw, 4, cap=MAX_NUMEL // 8, choices=SPATIAL[:6]))


def is_volume(v: Value) -> bool:
    return v.rank == 5 and v.shape[1] <= 65 and all(d <= 17 for d in v.shape[2:])


def convolvable(v: Value) -> bool:
    return is_image(v) or is_volume(v)


def image_or_volume(draw, g: GraphBuilder) -> Value:
    return volume(draw, g) if draw(st.integers(0, 3)) == 3 else image(draw, g)


def window(draw, extent: int, pool: bool) -> dict:
    """One spatial axis of a sliding window: kernel, stride, dilation and pads whose
    window fits the padded extent (a pool's pads stay below its kernel)."""
    kernel, stride = draw(st.sampled_from((1, 2, 3, 5))), draw(st.sampled_from((1, 2, 3)))
    dilation = draw(st.sampled_from((1, 2)))
    reach = (kernel - 1) * dilation
    begin, end = (draw(st.integers(0, max(kernel - 1, 0) if pool else reach)) for _ in range(2))
    if extent + begin + end < reach + 1:
        kernel, dilation, begin, end = min(kernel, extent), 1, 0, 0
    return {"kernel": kernel, "stride": stride, "dilation": dilation, "begin": begin, "end": end}


def out_extent(extent: int, w: dict, auto_pad: str, ceil_mode: int = 0) -> int:
    reach = (w["kernel"] - 1) * w["dilation"] + 1
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return -(-extent // w["stride"])
    if auto_pad == "VALID":
        return (extent - reach) // w["stride"] + 1
    span = extent + w["begin"] + w["end"] - reach
    return (-(-span // w["stride"]) if ceil_mode else span // w["stride"]) + 1


def starts_in_end_padding(extent: int, w: dict) -> bool:
    """Whether ceil mode adds a window that starts past the input and its begin padding:
    onnxruntime drops it, ONNX's shape inference keeps it; such pools are not drawn."""
    return (out_extent(extent, w, "NOTSET", 1) - 1) * w["stride"] >= extent + w["begin"]


def reads_input(extent: int, w: dict, ceil_mode: int) -> bool:
    """Whether every window (explicit pads) has a tap on the input: a dilated window can
    fall wholly in the padding, where a max pool is -inf (onnxruntime) and whatever
    follows compares infinities (a degenerate reference, not a bug)."""
    return all(
        any(0 <= o * w["stride"] - w["begin"] + t * w["dilation"] < extent for t in range(w["kernel"]))
        for o in range(out_extent(extent, w, "NOTSET", ceil_mode))
    )


def window_attrs(draw, x: Value, pool: bool, dilations: bool = True) -> tuple:
    """(attributes, output spatial extents) of a sliding window over ``x``'s spatial axes."""
    windows = [window(draw, d, pool) for d in x.shape[2:]]
    for extent, w in zip(x.shape[2:], windows):
        if not dilations or (pool and not reads_input(extent, w, ceil_mode=1)):
            w["dilation"] = 1
    auto_pad = draw(st.sampled_from(("NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")))
    if auto_pad == "VALID" and any(d < (w["kernel"] - 1) * w["dilation"] + 1 for d, w in zip(x.shape[2:], windows)):
        auto_pad = "NOTSET"
    if auto_pad.startswith("SAME"):
        for w in windows:  # onnxruntime: no dilated SAME padding, nor a stride over the kernel (negative pads)
            w["dilation"], w["stride"] = 1, min(w["stride"], w["kernel"])
    attrs = {"kernel_shape": [w["kernel"] for w in windows], "strides": [w["stride"] for w in windows]}
    if dilations:
        attrs["dilations"] = [w["dilation"] for w in windows]
    if auto_pad == "NOTSET":
        attrs["pads"] = [w["begin"] for w in windows] + [w["end"] for w in windows]
    else:
        attrs["auto_pad"] = auto_pad
    ceil_mode = draw(st.integers(0, 1)) if pool and auto_pad == "NOTSET" else 0
    if any(starts_in_end_padding(d, w) for d, w in zip(x.shape[2:], windows)):
        ceil_mode = 0
    if ceil_mode:
        attrs["ceil_mode"] = 1
    return attrs, [out_extent(d, w, auto_pad, ceil_mode) for d, w in zip(x.shape[2:], windows)]


def conv(draw, g: GraphBuilder) -> None:
    x = pick(draw, g, convolvable, image_or_volume)
    n, c = x.shape[:2]
    group = draw(st.sampled_from(sorted({1, c} | {d for d in (2, 4, 8) if c % d == 0})))
    m = group * draw(st.sampled_from((1, 2, 3, 4, 8)))
    attrs, spatial = window_attrs(draw, x, pool=False)
    fan_in = c // group * math.prod(attrs["kernel_shape"])
    out = (n, m, *spatial)
    if math.prod(out) > MAX_NUMEL or math.prod(out) * fan_in > MAX_MACS:
        out, m, group, attrs, spatial = (n, c, *x.shape[2:]), c, c, {"kernel_shape": [1] * (x.rank - 2)}, x.shape[2:]
        fan_in = 1
    inputs = [x, weight(draw, g, (m, c // group, *attrs["kernel_shape"]), fan_in)]
    if draw(st.booleans()):
        inputs.append(constant(draw, g, (m,)))
    y = g.one("Conv", inputs, out, scale=x.scale + 0.5, group=group, **attrs)
    epilogue(draw, g, y, 1)


def siblings(draw, g: GraphBuilder) -> None:
    """2-4 MatMuls or Convs of one input with weights of their own (the Q/K/V
    projections, an Inception module's 1x1 convolutions: ecg-fuse merges them), each
    followed by its own epilogue or all by the same bias + activation."""
    x = pick(draw, g, lambda v: v.rank >= 2 and v.numel * 4 <= MAX_NUMEL)
    if is_image(x) and draw(st.booleans()):
        c = x.shape[1]
        attrs, spatial = window_attrs(draw, x, pool=False)
        fan_in = c * math.prod(attrs["kernel_shape"])
        widths = [m for m in (1, 2, 3, 4, 8) if math.prod((x.shape[0], m, *spatial)) <= MAX_NUMEL // 4
                  and math.prod(spatial) * m * fan_in <= MAX_MACS // 4]
        if not widths:
            return
        kernel, channel = attrs["kernel_shape"], 1
        branches = []
        for _ in range(draw(st.integers(2, 4))):
            m = draw(st.sampled_from(widths))
            inputs = [x, weight(draw, g, (m, c, *kernel), fan_in)]
            if draw(st.booleans()):
                inputs.append(constant(draw, g, (m,)))
            branches.append(g.one("Conv", inputs, (x.shape[0], m, *spatial), scale=x.scale + 0.5, **attrs))
    else:
        k, channel = x.shape[-1], -1
        widths = [d for d in DIMS if x.numel // k * d <= MAX_NUMEL // 4 and x.numel * d <= MAX_MACS // 4] or [1]
        branches = []
        for _ in range(draw(st.integers(2, 4))):
            w = weight(draw, g, (k, draw(st.sampled_from(widths))), k)
            scale = x.scale * w.scale * math.sqrt(k)
            branches.append(g.one("MatMul", [x, w], matmul_shape(x.shape, w.shape), scale=scale))
    if draw(st.booleans()):
        activation = draw(st.sampled_from(ACTIVATIONS))
        for y in branches:
            y = bias(draw, g, y, channel)
            g.one(activation, [y], y.shape, scale=y.scale)
    else:
        for y in branches:
            epilogue(draw, g, y, channel)


def attention(draw, g: GraphBuilder) -> None:
    """Self-attention over the last two axes of a value x [..., s, d]: Q and K
    projections of x, their scores scaled to unit magnitude, an optional additive
    mask (-10000 on some keys, as BERT's padding mask), a softmax over the keys and
    the probabilities times x (ecg-fuse makes the chain one block; the code generator
    loops over its leading dims, the heads)."""
    def fits(v: Value) -> bool:
        return v.rank >= 3 and v.numel * v.shape[-2] <= MAX_NUMEL and v.numel * max(v.shape[-2:]) <= MAX_MACS // 4

    def heads(d, g) -> Value:  # [batch,] heads, sequence, depth: within both bounds
        return g.input(d(st.sampled_from(((), (1,), (2,)))) + dims(d, 3, cap=2048, choices=DIMS[:7]))

    x = pick(draw, g, fits, heads)
    s, d = x.shape[-2:]
    q, k = (g.one("MatMul", [x, w], x.shape, scale=x.scale) for w in (weight(draw, g, (d, d), d) for _ in range(2)))
    perm = list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]
    kt = g.one("Transpose", [k], x.shape[:-2] + (d, s), scale=k.scale, perm=perm)
    scores = g.one("MatMul", [q, kt], x.shape[:-2] + (s, s), scale=q.scale * k.scale * math.sqrt(d))
    scores = g.one("Mul", [scores, g.constant(np.array(1 / scores.scale, FLOAT))], scores.shape)
    if draw(st.booleans()):
        mask = np.where(np.random.default_rng(draw(st.integers(0, 2**16))).random((s, s)) < 1 / 3, -10000.0, 0.0)
        mask[:, 0] = 0.0  # every query sees a key
        # Its magnitude is the mask's (rescaled if a later op reads it), not the scores'.
        scores = g.one("Add", [scores, g.constant(mask.astype(FLOAT))], scores.shape, scale=float(np.std(mask)) + 1)
    probs = g.one("Softmax", [scores], scores.shape, scale=1 / s, axis=-1)
    g.one("MatMul", [probs, x], x.shape, scale=x.scale)


def conv_transpose(draw, g: GraphBuilder) -> None:
    """ConvTranspose of 1 to 3 spatial axes: strides, dilations, groups, output_padding,
    and its output size from pads, SAME_* or output_shape (onnxruntime: SAME without
    dilation, neither beyond the full result)."""
    x = pick(draw, g, lambda v: convolvable(v) and v.numel <= 4096,
             lambda d, g: g.input(dims(d, d(st.sampled_from((4, 3, 5))), 4096, SPATIAL[:6])))
    n, c, *extents = x.shape
    group = draw(st.sampled_from(sorted({1, c} | {d for d in (2, 4) if c % d == 0})))
    m = group * draw(st.sampled_from((1, 2, 3)))
    kernels = [draw(st.sampled_from((1, 2, 3, 4))) for _ in extents]
    strides = [draw(st.sampled_from((1, 2, 3))) for _ in extents]
    sizing = draw(st.sampled_from(("pads", "pads", "SAME_UPPER", "SAME_LOWER", "output_shape")))
    dilations = [1 if sizing.startswith("SAME") else draw(st.sampled_from((1, 1, 2))) for _ in extents]
    # onnxruntime takes output_padding below the stride only (ONNX: below the stride or
    # the dilation); with SAME, ONNX's shape inference adds it to the size, onnxruntime not.
    output_padding = [0 if sizing.startswith("SAME") else draw(st.integers(0, s - 1)) for s in strides]
    full = [(e - 1) * s + p + (k - 1) * d + 1
            for e, s, p, k, d in zip(extents, strides, output_padding, kernels, dilations)]
    attrs = {"kernel_shape": kernels, "strides": strides, "dilations": dilations, "output_padding": output_padding}
    if sizing == "pads":
        pads = [draw(st.integers(0, k - 1)) for k in kernels * 2]
        spatial = [f - pads[i] - pads[i + len(full)] for i, f in enumerate(full)]
        attrs["pads"] = pads
    elif sizing == "output_shape":
        spatial = [max(1, f - draw(st.integers(0, s - 1))) for f, s in zip(full, strides)]
        attrs["output_shape"] = spatial
    else:
        spatial = [e * s for e, s in zip(extents, strides)]
        attrs["auto_pad"] = sizing
    if min(spatial) < 1 or any(o > f for o, f in zip(spatial, full)) or n * m * math.prod(spatial) > MAX_NUMEL:
        ones = [1] * len(extents)
        attrs = {"kernel_shape": ones, "strides": ones, "dilations": ones, "output_padding": [0] * len(extents)}
        kernels, strides, spatial = ones, ones, extents
    fan_in = max(1, c // group * math.prod(kernels) // math.prod(strides))
    inputs = [x, weight(draw, g, (c, m // group, *kernels), fan_in)]
    if draw(st.booleans()):
        inputs.append(constant(draw, g, (m,)))
    g.one("ConvTranspose", inputs, (n, m, *spatial), scale=x.scale + 0.5, group=group, **attrs)


def pool(draw, g: GraphBuilder) -> None:
    x = pick(draw, g, is_image, image)
    kind = draw(st.sampled_from(("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")))
    if kind.startswith("Global"):
        g.one(kind, [x], x.shape[:2] + (1,) * (x.rank - 2), scale=x.scale)
        return
    attrs, spatial = window_attrs(draw, x, pool=True, dilations=kind == "MaxPool")
    if kind == "AveragePool":
        attrs["count_include_pad"] = draw(st.integers(0, 1))
    g.one(kind, [x], x.shape[:2] + tuple(spatial), scale=x.scale * (2 if kind == "MaxPool" else 1), **attrs)


def reduce(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    op_type = draw(st.sampled_from(sorted(REDUCTIONS)))
    axes = draw(st.lists(st.integers(0, x.rank - 1), max_size=x.rank, unique=True))
    reduced = axes or list(range(x.rank))
    count = math.prod(x.shape[a] for a in reduced)
    if op_type == "ReduceProd" and count > 8:
        op_type = "ReduceMax"
    if op_type == "ReduceLogSum":
        x = positive(g, x)
    keepdims = draw(st.integers(0, 1))
    shape = tuple(1 if i in reduced else d for i, d in enumerate(x.shape) if keepdims or i not in reduced)
    inputs = [x]
    if axes:
        inputs.append(g.constant(np.array([a - x.rank if draw(st.booleans()) else a for a in axes], np.int64)))
    g.one(op_type, inputs, shape, scale=REDUCTIONS[op_type](x.scale, count), keepdims=keepdims)


def row_op(draw, g: GraphBuilder) -> None:
    """Softmax, LogSoftmax or LayerNormalization along a random axis."""
    x = pick(draw, g)
    a = axis(draw, x.rank)
    kind = draw(st.sampled_from(("Softmax", "LogSoftmax", "LayerNormalization")))
    if kind == "Softmax":
        g.one(kind, [x], x.shape, scale=1 / x.shape[a], axis=a)
    elif kind == "LogSoftmax":
        g.one(kind, [x], x.shape, scale=x.scale + math.log(x.shape[a]), axis=a)
    else:
        inner = x.shape[a % x.rank:]
        inputs = [x, constant(draw, g, inner)]
        if draw(st.booleans()):
            inputs.append(constant(draw, g, inner))
        g.one(kind, inputs, x.shape, scale=1.5, axis=a, epsilon=draw(st.sampled_from(EPSILONS)))


def normalization(draw, g: GraphBuilder) -> None:
    """BatchNormalization (inference), InstanceNormalization or LRN over channel axis 1."""
    kind = draw(st.sampled_from(("BatchNormalization", "InstanceNormalization", "LRN")))
    x = pick(draw, g, lambda v: v.rank >= (4 if kind == "LRN" else 3) and is_image(v),
             lambda d, g: g.input(dims(d, 4, MAX_NUMEL // 4, SPATIAL)))
    c = x.shape[1]
    if kind == "LRN":
        g.one(kind, [x], x.shape, scale=x.scale, size=draw(st.sampled_from((1, 3, 5))),
              alpha=draw(st.sampled_from((1e-4, 0.5))), beta=0.75, bias=draw(st.sampled_from((1.0, 2.0))))
        return
    inputs = [x, constant(draw, g, (c,)), constant(draw, g, (c,))]
    if kind == "BatchNormalization":
        inputs += [constant(draw, g, (c,)), g.constant(np.abs(np.random.default_rng(c).standard_normal(c)).astype(FLOAT) + 0.5)]
    g.one(kind, inputs, x.shape, scale=2.0, epsilon=draw(st.sampled_from(EPSILONS)))


FAMILIES = {
    "matmul": matmul, "gemm": gemm, "conv": conv, "siblings": siblings, "attention": attention,
    "conv_transpose": conv_transpose, "pool": pool,
    "reduce": reduce, "row_op": row_op, "normalization": normalization,
}

__all__ = ["FAMILIES", "MAX_MACS", "matmul_shape", "out_extent"]
