"""The kernel sweep's cases: one ONNX node per op family, at a shape models use.

Each ``SweepCase`` makes its model and its inputs (seeded: indices valid and, where
ONNX leaves duplicates undefined, unique). Activations are graph inputs; weights,
quantization parameters and caches are initializers, as in a deployed model. The
families are those of the node-suite issue (resampling, transposed, grouped and
depthwise convolution, recurrent cells, Einsum, TopK, scatter and gather, GridSample,
CumSum, quantization, Attention, RMSNormalization, RotaryEmbedding) and Transpose, plus
1x1 convolutions on small outputs (their columns pad to whole register tiles: 49 -> 64),
and the grid of shapes of the common families (``grid.py``).
"""

from __future__ import annotations

import numpy as np

from .grid import GRID
from .one_node import SweepCase, one_node
from .one_node import randn


def _resize(mode: str, channels: int):
    def build(rng):
        x = randn(rng, 1, channels, 56, 56)
        scales = np.array([1, 1, 2, 2], np.float32)
        attrs = {"mode": mode}
        if mode == "cubic":
            attrs["cubic_coeff_a"] = -0.75
        return one_node("Resize", {"x": x}, {"scales": scales}, ["x", "", "scales"], opset=19, **attrs), {"x": x}
    return SweepCase("Resize", f"resize-{mode}", f"1x{channels}x56x56 x2 -> 1x{channels}x112x112", build)


def _conv_transpose(rng):
    x, w = randn(rng, 1, 64, 28, 28), randn(rng, 64, 32, 4, 4) * 0.05
    model = one_node("ConvTranspose", {"x": x}, {"w": w, "b": randn(rng, 32)}, strides=[2, 2], pads=[1, 1, 1, 1])
    return model, {"x": x}


def _conv(channels: int, group: int, size: int, stride: int = 1):
    def build(rng):
        x, w = randn(rng, 1, channels, size, size), randn(rng, channels, channels // group, 3, 3) * 0.1
        model = one_node("Conv", {"x": x}, {"w": w, "b": randn(rng, channels)}, group=group, pads=[1, 1, 1, 1],
                         strides=[stride, stride])
        return model, {"x": x}
    kind = "depthwise" if group == channels else f"grouped{group}"
    variant = f"-s{stride}" if stride > 1 else ""
    return SweepCase("Conv", f"conv-{kind}{variant}", f"1x{channels}x{size}x{size}, 3x3, group {group}, stride {stride}",
                     build)


def _pointwise(channels: int, filters: int, size: int):
    """A 1x1 convolution + bias on a small output (ResNet-50's last stage, MobileNetV2's late blocks)."""
    def build(rng):
        x, w = randn(rng, 1, channels, size, size), randn(rng, filters, channels, 1, 1) * 0.1
        return one_node("Conv", {"x": x}, {"w": w, "b": randn(rng, filters)}), {"x": x}
    return SweepCase("Conv1x1", f"conv1x1-{channels}-{filters}-{size}", f"1x{channels}x{size}x{size}, 1x1 -> {filters}",
                     build)


def _conv1d(channels: int, filters: int, width: int, kernel: int, stride: int = 1, dilation: int = 1,
            group: int = 1):
    """A 1-D convolution padded to keep ``width / stride`` frames (speech and audio front ends)."""
    pad = dilation * (kernel - 1) // 2

    def build(rng):
        x = randn(rng, 1, channels, width)
        w = randn(rng, filters, channels // group, kernel) * 0.1
        model = one_node("Conv", {"x": x}, {"w": w, "b": randn(rng, filters)}, group=group, pads=[pad, pad],
                         strides=[stride], dilations=[dilation])
        return model, {"x": x}
    variant = "".join(f"-{name}{value}" for name, value in (("s", stride), ("d", dilation), ("g", group)) if value > 1)
    shape = f"1x{channels}x{width} -> {filters}, k{kernel} s{stride} d{dilation} g{group}"
    return SweepCase("Conv1D", f"conv1d-{channels}-{filters}{variant}", shape, build)


def _pool(op: str, channels: int, size: int, kernel: int, stride: int, pads=(0, 0, 0, 0), **attrs):
    """A 2-D (or, with ``size`` a pair, 1-D: ``(1, width)`` as ``[width]``) max or average
    pool at a judged model's shape."""
    one_d = isinstance(size, tuple)
    shape = (1, channels, size[1]) if one_d else (1, channels, size, size)
    dims = 1 if one_d else 2

    def build(rng):
        x = randn(rng, *shape)
        pad = list(pads[:1] + pads[2:3]) if one_d else list(pads)
        return one_node(op, {"x": x}, kernel_shape=[kernel] * dims, strides=[stride] * dims, pads=pad, **attrs), {"x": x}
    extra = "".join(f" {name} {value}" for name, value in attrs.items())
    flags = ("-pad" if any(pads) else "") + "".join(f"-{name.split('_')[0]}" for name in attrs)
    name = f"{op.lower()}-{'x'.join(map(str, shape[1:]))}-k{kernel}s{stride}{flags}"
    return SweepCase("Pooling", name, f"{'x'.join(map(str, shape))}, {kernel}/{stride}, pads {list(pads)}{extra}", build)


def _recurrent(op: str, gates: int):
    def build(rng):
        length, hidden, size = 32, 128, 128
        x = randn(rng, length, 1, size)
        weights = {"w": randn(rng, 1, gates * hidden, size) * 0.1, "r": randn(rng, 1, gates * hidden, hidden) * 0.1,
                   "b": randn(rng, 1, 2 * gates * hidden) * 0.1}
        return one_node(op, {"x": x}, weights, hidden_size=hidden, opset=22), {"x": x}
    return SweepCase(op, op.lower(), "32 steps, batch 1, input 128, hidden 128", build)


def _einsum(rng):
    q, k = randn(rng, 1, 8, 128, 64), randn(rng, 1, 8, 128, 64)
    return one_node("Einsum", {"q": q, "k": k}, equation="bhqd,bhkd->bhqk"), {"q": q, "k": k}


def _topk(rng):
    x = randn(rng, 64, 1000)
    return one_node("TopK", {"x": x}, {"k": np.array([5], np.int64)}, outputs=2, axis=-1), {"x": x}


def _scatter_nd(rng):
    data, updates = randn(rng, 4096, 64), randn(rng, 1024, 64)
    indices = rng.permutation(4096)[:1024].reshape(1024, 1).astype(np.int64)
    inputs = {"data": data, "updates": updates}
    return one_node("ScatterND", inputs, {"indices": indices}, ["data", "indices", "updates"]), inputs


def _scatter_elements(rng):
    data, updates = randn(rng, 512, 256), randn(rng, 128, 256)
    indices = np.stack([rng.permutation(512)[:128] for _ in range(256)], axis=1).astype(np.int64)
    inputs = {"data": data, "updates": updates}
    return one_node("ScatterElements", inputs, {"indices": indices}, ["data", "indices", "updates"], axis=0), inputs


def _gather_nd(rng):
    data = randn(rng, 4096, 256)
    indices = rng.integers(0, 4096, (1024, 1)).astype(np.int64)
    return one_node("GatherND", {"data": data}, {"indices": indices}), {"data": data}


def _grid_sample(mode: str):
    def build(rng):
        x, grid = randn(rng, 1, 32, 64, 64), rng.uniform(-1.1, 1.1, (1, 64, 64, 2)).astype(np.float32)
        return one_node("GridSample", {"x": x, "grid": grid}, opset=20, mode=mode), {"x": x, "grid": grid}
    return SweepCase("GridSample", f"grid-sample-{mode}", "1x32x64x64, grid 1x64x64x2", build)


def _cumsum(rng):
    x = randn(rng, 64, 4096)
    return one_node("CumSum", {"x": x}, {"axis": np.array(1, np.int64)}), {"x": x}


def _quantize(rng):
    x = randn(rng, 1, 64, 56, 56)
    params = {"scale": np.array(0.02, np.float32), "zero": np.array(128, np.uint8)}
    return one_node("QuantizeLinear", {"x": x}, params), {"x": x}


def _dequantize(rng):
    x = rng.integers(0, 256, (1, 64, 56, 56)).astype(np.uint8)
    params = {"scale": np.array(0.02, np.float32), "zero": np.array(128, np.uint8)}
    return one_node("DequantizeLinear", {"x": x}, params), {"x": x}


def _qlinear_conv(rng):
    x = rng.integers(0, 256, (1, 64, 28, 28)).astype(np.uint8)
    constants = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
                 "w": rng.integers(-127, 128, (64, 64, 3, 3)).astype(np.int8),
                 "ws": np.array(0.01, np.float32), "wz": np.array(0, np.int8),
                 "ys": np.array(0.5, np.float32), "yz": np.array(128, np.uint8)}
    order = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    return one_node("QLinearConv", {"x": x}, constants, order, opset=10, pads=[1, 1, 1, 1]), {"x": x}


def _qlinear_matmul(rng):
    a = rng.integers(0, 256, (128, 256)).astype(np.uint8)
    constants = {"as": np.array(0.02, np.float32), "az": np.array(128, np.uint8),
                 "b": rng.integers(-127, 128, (256, 256)).astype(np.int8),
                 "bs": np.array(0.01, np.float32), "bz": np.array(0, np.int8),
                 "ys": np.array(0.5, np.float32), "yz": np.array(128, np.uint8)}
    order = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    return one_node("QLinearMatMul", {"a": a}, constants, order, opset=10), {"a": a}


def _matmul_integer(rng):
    a = rng.integers(0, 256, (128, 256)).astype(np.uint8)
    constants = {"b": rng.integers(-127, 128, (256, 256)).astype(np.int8), "az": np.array(128, np.uint8)}
    return one_node("MatMulInteger", {"a": a}, constants, ["a", "b", "az"], opset=10), {"a": a}


def _attention(rng):
    q, k, v = (randn(rng, 1, 8, 128, 64) for _ in range(3))
    inputs = {"q": q, "k": k, "v": v}
    return one_node("Attention", inputs, is_causal=1), inputs


def _rms_normalization(rng):
    x = randn(rng, 1, 128, 768)
    return one_node("RMSNormalization", {"x": x}, {"scale": randn(rng, 768)}, epsilon=1e-6), {"x": x}


def _rotary_embedding(rng):
    x = randn(rng, 1, 8, 128, 64)
    angles = rng.uniform(0, 2 * np.pi, (256, 32))
    constants = {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32),
                 "positions": np.arange(128, dtype=np.int64).reshape(1, 128)}
    return one_node("RotaryEmbedding", {"x": x}, constants, ["x", "cos", "sin", "positions"]), {"x": x}


def _transpose(shape: tuple, perm: tuple, what: str):
    """A Transpose (a Reorganize op: only memory traffic) of ``shape`` by ``perm``."""
    def build(rng):
        x = randn(rng, *shape)
        return one_node("Transpose", {"x": x}, perm=list(perm)), {"x": x}
    dims = "x".join(map(str, shape))
    return SweepCase("Transpose", f"transpose-{what}", f"{dims} perm {','.join(map(str, perm))}", build)


def _unit_dims(op: str, shape: tuple, opset: int = 23, **attrs):
    """An op over a tensor whose trailing dims are 1 (vectorized along them, as vectors
    of one element, until unit dims were folded: ``codegen/cpu/unit_dims.py``)."""
    def build(rng):
        x = randn(rng, *shape)
        constants = {}
        if op == "LayerNormalization":
            normalized = shape[attrs["axis"]:]
            constants = {"scale": randn(rng, *normalized), "bias": randn(rng, *normalized)}
        return one_node(op, {"x": x}, constants, opset=opset, **attrs), {"x": x}
    return SweepCase("UnitDims", f"unit-dims-{op.lower()}", "x".join(map(str, shape)), build)


CASES = (
    _resize("nearest", 64),
    _resize("linear", 64),
    _resize("cubic", 32),
    SweepCase("ConvTranspose", "conv-transpose-s2", "1x64x28x28 -> 1x32x56x56, 4x4, stride 2", _conv_transpose),
    _conv(128, 32, 28),
    _conv(144, 144, 56),
    _conv(96, 96, 112, stride=2),
    _conv1d(80, 384, 500, 3),
    _conv1d(384, 384, 500, 3, stride=2),
    _conv1d(256, 256, 1000, 3, dilation=4),
    _conv1d(256, 256, 500, 5, group=8),
    _conv1d(256, 256, 500, 31, group=256),
    _pool("MaxPool", 64, 111, 3, 2),  # SqueezeNet
    _pool("MaxPool", 192, 56, 3, 2, (0, 0, 1, 1)),  # Inception v2
    _pool("MaxPool", 64, 112, 3, 2, (1, 1, 1, 1)),  # ResNet-50, DenseNet-121
    _pool("MaxPool", 256, 27, 3, 1, (1, 1, 1, 1)),  # Inception v1's pool branch
    _pool("MaxPool", 512, 13, 3, 1, (1, 1, 1, 1)),  # narrower than a vector
    _pool("MaxPool", 64, 224, 2, 2),  # VGG-19
    _pool("MaxPool", 64, 111, 3, 2, ceil_mode=1),
    _pool("AveragePool", 256, 28, 3, 1, (1, 1, 1, 1)),  # Inception v2's pool branch
    _pool("AveragePool", 128, 56, 2, 2),  # DenseNet-121's transitions
    _pool("AveragePool", 136, 28, 3, 2, (1, 1, 1, 1), count_include_pad=1),  # ShuffleNet
    _pool("AveragePool", 2048, 7, 7, 1),  # ResNet-50: global
    _pool("MaxPool", 64, (1, 1000), 3, 2, (1, 0, 1, 0)),  # 1-D
    _recurrent("LSTM", 4),
    _recurrent("GRU", 3),
    SweepCase("Einsum", "einsum-qk", "bhqd,bhkd->bhqk, 1x8x128x64", _einsum),
    SweepCase("TopK", "topk", "64x1000, k 5", _topk),
    SweepCase("ScatterND", "scatter-nd", "4096x64, 1024 rows", _scatter_nd),
    SweepCase("ScatterElements", "scatter-elements", "512x256, 128x256 updates, axis 0", _scatter_elements),
    SweepCase("GatherND", "gather-nd", "4096x256, 1024 rows", _gather_nd),
    _grid_sample("linear"),
    _grid_sample("nearest"),
    SweepCase("CumSum", "cumsum", "64x4096, axis 1", _cumsum),
    SweepCase("QuantizeLinear", "quantize-linear", "1x64x56x56 f32 -> u8", _quantize),
    SweepCase("DequantizeLinear", "dequantize-linear", "1x64x56x56 u8 -> f32", _dequantize),
    SweepCase("QLinearConv", "qlinear-conv", "1x64x28x28 u8, 64x64x3x3 i8", _qlinear_conv),
    SweepCase("QLinearMatMul", "qlinear-matmul", "128x256 u8 x 256x256 i8", _qlinear_matmul),
    SweepCase("MatMulInteger", "matmul-integer", "128x256 u8 x 256x256 i8 -> i32", _matmul_integer),
    SweepCase("Attention", "attention-causal", "1x8x128x64, causal", _attention),
    SweepCase("RMSNormalization", "rms-normalization", "1x128x768", _rms_normalization),
    SweepCase("RotaryEmbedding", "rotary-embedding", "1x8x128x64, positions", _rotary_embedding),
    _transpose((512, 256), (1, 0), "2d"),
    _transpose((1, 64, 56, 56), (0, 2, 3, 1), "nchw-nhwc"),
    _transpose((1, 12, 128, 64), (0, 1, 3, 2), "keys"),
    _transpose((1, 128, 12, 64), (0, 2, 1, 3), "heads"),
    _transpose((1, 2, 58, 28, 28), (0, 2, 1, 3, 4), "channel-shuffle"),
    _transpose((1, 8, 7, 8, 7, 96), (0, 1, 3, 2, 4, 5), "windows"),
    _unit_dims("Sigmoid", (512, 512, 1)),
    _unit_dims("GlobalAveragePool", (8, 1024, 7, 7)),
    _unit_dims("LayerNormalization", (7, 64, 64, 1), axis=1),
    _pointwise(512, 2048, 7),
    _pointwise(2048, 512, 7),
    _pointwise(1024, 256, 14),
    _pointwise(160, 960, 7),
    _pointwise(320, 1280, 7),
    _pointwise(320, 1280, 3),
    _pointwise(160, 960, 5),
    *GRID,
)


def cases_of(families) -> list:
    """The cases of ``families`` (names of ``SweepCase.family``, case-insensitive, or
    case names); all for None. ``ValueError`` names what matches none."""
    if not families:
        return list(CASES)
    wanted = {f.lower() for f in families}
    known = {c.family.lower() for c in CASES} | {c.name for c in CASES}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"no kernel family {', '.join(unknown)}; families: "
                         f"{', '.join(sorted({c.family for c in CASES}))}")
    return [c for c in CASES if c.family.lower() in wanted or c.name in wanted]


__all__ = ["CASES", "SweepCase", "cases_of", "one_node"]
