"""The sweep's grid of shapes for the common families (issue 29, item 2): matmuls over
rows from 7 to 4096, every broadcast pattern of a binary op, reductions over each axis,
and dense 2-D and 3-D convolutions (dilated, non-square, batched, strided 1x1), each
with odd, prime and tiny sizes beside the shapes models use. Weights are initializers,
activations graph inputs, as in ``cases.py``.
"""

from __future__ import annotations

from math import prod

import numpy as np

from .one_node import SweepCase, one_node, randn


def _dims(shape) -> str:
    return "x".join(map(str, shape)) or "scalar"


def _matmul(rows: int, depth: int, columns: int, what: str = ""):
    """``rows x depth`` activations times ``depth x columns`` weights."""
    def build(rng):
        x, w = randn(rng, rows, depth), randn(rng, depth, columns) / np.float32(np.sqrt(depth))
        return one_node("MatMul", {"x": x}, {"w": w}), {"x": x}
    return SweepCase("MatMul", f"matmul-{rows}x{depth}x{columns}{what}", f"{rows}x{depth} @ {depth}x{columns}", build)


def _batched_matmul(heads: int, rows: int, depth: int):
    """Attention's scores: both operands activations, ``heads`` of ``rows x depth`` each."""
    def build(rng):
        a, b = randn(rng, 1, heads, rows, depth), randn(rng, 1, heads, depth, rows)
        return one_node("MatMul", {"a": a, "b": b}), {"a": a, "b": b}
    return SweepCase("MatMul", f"matmul-batched-{heads}x{rows}x{depth}",
                     f"1x{heads}x{rows}x{depth} @ 1x{heads}x{depth}x{rows}", build)


def _gemm(rows: int, depth: int, columns: int):
    """A classifier: ``Gemm`` with transposed weights and a bias."""
    def build(rng):
        x, w = randn(rng, rows, depth), randn(rng, columns, depth) / np.float32(np.sqrt(depth))
        return one_node("Gemm", {"x": x}, {"w": w, "b": randn(rng, columns)}, transB=1), {"x": x}
    return SweepCase("MatMul", f"gemm-{rows}x{depth}x{columns}", f"{rows}x{depth} @ ({columns}x{depth})^T + bias",
                     build)


def _binary(op: str, left: tuple, right: tuple, what: str):
    """``op`` of two activations broadcast against each other."""
    def build(rng):
        inputs = {"a": randn(rng, *left), "b": randn(rng, *right)}
        return one_node(op, inputs), inputs
    return SweepCase("Broadcast", f"{op.lower()}-{what}", f"{_dims(left)} {op} {_dims(right)}", build)


def _reduce(op: str, shape: tuple, axes, what: str):
    """``op`` over ``axes`` (None: all) of an activation, dims kept."""
    def build(rng):
        x = randn(rng, *shape)
        constants = {} if axes is None else {"axes": np.array(axes, np.int64)}
        return one_node(op, {"x": x}, constants, opset=18), {"x": x}
    over = "all axes" if axes is None else f"axes {list(axes)}"
    return SweepCase("Reduce", f"{op.lower()}-{what}", f"{_dims(shape)} over {over}", build)


def _softmax(shape: tuple, axis: int):
    def build(rng):
        x = randn(rng, *shape)
        return one_node("Softmax", {"x": x}, axis=axis), {"x": x}
    return SweepCase("Reduce", f"softmax-{_dims(shape)}-axis{axis}", f"{_dims(shape)}, axis {axis}", build)


def _dense_conv(shape: tuple, filters: int, kernel: tuple, stride: int = 1, dilation: int = 1, group: int = 1):
    """A convolution + bias over ``shape`` (N, C, spatial...), padded to keep the
    size at stride 1; the family is its spatial rank's (``Conv2D``, ``Conv3D``)."""
    rank = len(kernel)
    pads = [dilation * (k - 1) // 2 for k in kernel]

    def build(rng):
        x = randn(rng, *shape)
        fan_in = shape[1] // group * prod(kernel)
        w = randn(rng, filters, shape[1] // group, *kernel) / np.float32(np.sqrt(fan_in))
        model = one_node("Conv", {"x": x}, {"w": w, "b": randn(rng, filters)}, group=group, pads=pads + pads,
                         strides=[stride] * rank, dilations=[dilation] * rank)
        return model, {"x": x}
    variant = "".join(f"-{name}{value}" for name, value in (("s", stride), ("d", dilation), ("g", group)) if value > 1)
    batch = f"b{shape[0]}-" if shape[0] > 1 else ""
    name = f"conv{rank}d-{batch}{_dims(shape[1:])}-{_dims(kernel)}-{filters}{variant}"
    what = f"{_dims(shape)}, {_dims(kernel)} -> {filters}, s{stride} d{dilation} g{group}"
    return SweepCase(f"Conv{rank}D" if rank != 1 else "Conv1D", name, what, build)


GRID = (
    _matmul(7, 768, 768),  # a few tokens: the weights' bandwidth
    _matmul(64, 768, 768),
    _matmul(197, 768, 3072),  # ViT's rows, odd
    _matmul(1024, 1024, 1024),
    _matmul(4096, 256, 256),
    _matmul(127, 257, 131, "-prime"),
    _matmul(3, 5, 7, "-tiny"),
    _batched_matmul(12, 197, 64),
    _gemm(7, 2048, 1000),
    _binary("Add", (1, 64, 56, 56), (1, 64, 56, 56), "same"),
    _binary("Add", (1, 64, 56, 56), (), "scalar"),
    _binary("Add", (1, 64, 56, 56), (56,), "row"),
    _binary("Add", (1, 64, 56, 56), (56, 1), "column"),
    _binary("Mul", (1, 64, 56, 56), (64, 1, 1), "channel"),
    _binary("Add", (1, 64, 1, 56), (1, 1, 56, 1), "both"),
    _binary("Add", (1, 61, 53, 53), (61, 1, 1), "channel-prime"),
    _binary("Mul", (1, 3, 7, 13), (13,), "tiny"),
    _reduce("ReduceSum", (32, 97, 256), [0], "axis0"),
    _reduce("ReduceSum", (32, 97, 256), [1], "axis1"),
    _reduce("ReduceSum", (32, 97, 256), [2], "axis2"),
    _reduce("ReduceSum", (32, 97, 256), None, "all"),
    _reduce("ReduceMax", (32, 97, 256), [1], "axis1"),
    _reduce("ReduceMean", (4096, 7), [1], "rows4096x7"),
    _softmax((4096, 128), -1),
    _softmax((64, 1000), -1),
    _softmax((1, 97, 256), 1),
    _dense_conv((1, 64, 56, 56), 64, (3, 3)),
    _dense_conv((1, 61, 29, 29), 67, (3, 3)),  # prime channels and plane
    _dense_conv((1, 128, 28, 28), 128, (3, 3), dilation=2),
    _dense_conv((1, 32, 28, 28), 64, (5, 5)),
    _dense_conv((1, 128, 17, 17), 128, (1, 7)),  # Inception's factorized 7x7
    _dense_conv((1, 4, 5, 5), 8, (3, 3)),  # tiny
    _dense_conv((4, 32, 28, 28), 32, (3, 3)),  # a batch of 4
    _dense_conv((1, 256, 56, 56), 512, (1, 1), stride=2),  # ResNet's projection shortcut
    _dense_conv((1, 7, 13), 5, (3,)),  # tiny, prime
    _dense_conv((1, 16, 8, 28, 28), 32, (3, 3, 3)),
    _dense_conv((1, 64, 8, 14, 14), 128, (1, 1, 1)),
    _dense_conv((1, 32, 8, 28, 28), 32, (3, 3, 3), group=32),  # depthwise 3-D
)


__all__ = ["GRID"]
