"""``dnnf-transpose-pointwise``: 1x1 convolutions over few positions computed as
``Y^T = X^T W^T``, vectors along the output channels, ``W^T`` made at compile time.

The CPU computes a single-image 1x1 convolution as the matmul ``W[F, C] @ X[C, P]``
(``convolutions.py``), its vectors along the P = OH*OW positions. Late in a
MobileNet P is small and no multiple of the vector: 6x6 = 36 positions run as two
tiles of 32 columns, 44% of the multiply-adds on padding. The output channels (96,
576, ...) are whole vectors: ``X^T[P, C] @ W^T[C, F]`` pads little, and its result is
transposed back (P x F floats, in cache). Measured on an AVX-512 Zen 5, single layers
with a residual add: 576 -> 96, 384 -> 64 and 96 -> 576 channels at 6x6 took 0.77,
0.80 and 0.84 of the plain matmul's time; ResNet-50's 2048 <-> 512 at 7x7 (49
positions, padded to 64) 1.03 and 1.19: the rewrite applies only where the plain
matmul's padded work is at least ``MIN_PADDING_SAVED`` times the transposed one's.

Runs on linalg on tensors after ``convert-ecg-to-linalg`` and before
``dnnf-externalize-weights``, while the filters are constants (``constant_filters.py``):
the weights file then holds ``W^T``. ``mode=always`` rewrites every convolution it can
(for tests).
"""

from __future__ import annotations

import math

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...transforms.registry import described_by_table
from ..constant_filters import ConstantFilters, calls_by_callee, replace_convolution
from ..errors import CodegenError
from ..linalg_queries import conv_params, is_f32, linalg_ops, reassociation, static_tensor_type
from ..lower_pass import TargetPass
from .target import CpuTarget
from .tiles import matmul_register_tile

MODES = ("auto", "always")
# The padded work of W @ X over that of X^T @ W^T from which the rewrite pays (see above:
# 1.78 gained 16-23%, 1.31 lost 3-19%).
MIN_PADDING_SAVED = 1.5
# The transposes and the epilogue left outside the matmul cost per output element what C
# multiply-adds save: in MobileNetV2 (6x6), 64 -> 384 and 96 -> 576 channels with ReLU6
# and the next layer's pad took 1.21 and 1.05 of the plain time, 192 -> 64 to 576 -> 96
# 0.78-0.91.
MIN_CHANNELS = 128
# W^T is the matmul's B operand, packed into panels at every call: Inception-v1's 832 ->
# 128 at 6x6 (416 KiB of filters) took 1.15 of the plain time where MobileNetV2's (up to
# 216 KiB) gained.
MAX_FILTER_BYTES = 256 * 1024


def is_pointwise_shape(op) -> bool:
    """Whether ``op`` is a single-image, 1x1, stride-1 f32 ``conv_2d_nchw_fchw`` with static shapes."""
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.results) != 1:
        return False
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or not is_f32(t) for t in types):
        return False
    x_t, w_t, out_t = types
    return (x_t.shape[0], *w_t.shape[2:]) == (1, 1, 1) and conv_params(op)[0] == [1, 1] \
        and list(x_t.shape[2:]) == list(out_t.shape[2:])


def padded_work(m: int, n: int, target: CpuTarget) -> int:
    """Multiply-adds per reduction step of the matmul micro-kernel on an M x N result,
    padding to whole register tiles and whole vectors included."""
    lanes = target.lanes(32)
    _, nr, pm, pn = matmul_register_tile(m, n, target)
    return pm * (pn // nr) * math.ceil(nr / lanes) * lanes


def transposing_pays(op, target: CpuTarget) -> bool:
    """Whether ``X^T W^T`` pads at least ``MIN_PADDING_SAVED`` times less than ``W X``,
    over at least ``MIN_CHANNELS`` input channels, whole vectors of output channels and
    at most ``MAX_FILTER_BYTES`` of filters."""
    _, f, oh, ow = static_tensor_type(op.results[0]).shape
    c = static_tensor_type(op.operands[0]).shape[1]
    p = oh * ow
    if c < MIN_CHANNELS or f % target.lanes(32) or c * f * 4 > MAX_FILTER_BYTES:
        return False
    return padded_work(f, p, target) >= MIN_PADDING_SAVED * padded_work(p, f, target)


def _transposed(value, shape):
    """``linalg.transpose`` of the 2-D ``value`` of ``shape``."""
    empty = _mlir.tensor.empty([shape[1], shape[0]], ir.F32Type.get())
    return _mlir.linalg.transpose(value, outs=[empty], permutation=[1, 0]).results[0]


def transposed_pointwise(op, filters_t) -> ir.Value:
    """``op`` as ``transpose(X^T @ W^T)`` expanded to NCHW, ``filters_t`` the ``[C, F]``
    filters; inserted before ``op``."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    out_t = static_tensor_type(op.results[0])
    _, f, oh, ow = out_t.shape
    c = static_tensor_type(op.operands[0]).shape[1]
    p = oh * ow
    f32 = out_t.element_type
    with ir.InsertionPoint(op), op.location:
        collapse = reassociation([[0, 1], [2, 3]])
        x = tensor.collapse_shape(ir.RankedTensorType.get([c, p], f32), op.operands[0], collapse)
        init = op.operands[2]
        init_op = init.owner if isinstance(init, ir.OpResult) else None
        if init_op is not None and init_op.name == "linalg.fill":
            init_t = linalg.fill(init_op.operands[0], outs=[tensor.empty([p, f], f32)])
        else:
            init_t = _transposed(tensor.collapse_shape(ir.RankedTensorType.get([f, p], f32), init, collapse), [f, p])
        product = linalg.matmul(_transposed(x, [c, p]), filters_t, outs=[init_t])
        return tensor.expand_shape(out_t, _transposed(product, [p, f]), collapse, [], [1, f, oh, ow])


def transpose_pointwise_convolutions(module_op, target: CpuTarget, always: bool = False) -> int:
    """Rewrite the 1x1 convolutions of ``module_op`` (an ``ir.Module`` or its operation)
    with constant filters where ``transposing_pays`` (``always``: every one); returns how many."""
    calls = calls_by_callee(module_op.operation)
    count = 0
    for op in linalg_ops(module_op.operation):
        if not is_pointwise_shape(op) or not (always or transposing_pays(op, target)):
            continue
        filters = ConstantFilters(op, calls)
        if not filters.constant():
            continue
        with op.location:
            result = transposed_pointwise(op, filters.transformed(lambda w: np.ascontiguousarray(w[:, :, 0, 0].T)))
        replace_convolution(op, result)
        count += 1
    return count


@described_by_table
class TransposePointwisePass(TargetPass):
    """``transpose_pointwise_convolutions`` as a pass."""

    NAME = "dnnf-transpose-pointwise"

    def lower(self, module, target, threads: int):
        if self.options["mode"] not in MODES:
            raise CodegenError(f"mode '{self.options['mode']}' is not one of {', '.join(MODES)}")
        if not isinstance(target, CpuTarget):
            raise CodegenError(f"target '{target.name}' is not a CPU")
        transpose_pointwise_convolutions(module, target, always=self.options["mode"] == "always")


__all__ = ["MAX_FILTER_BYTES", "MIN_CHANNELS", "MIN_PADDING_SAVED", "MODES", "TransposePointwisePass", "is_pointwise_shape", "padded_work",
           "transpose_pointwise_convolutions", "transposed_pointwise", "transposing_pays"]
