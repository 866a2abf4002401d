"""``dnnf-channel-panels``: convolutions over few positions computed with vectors along
the output channels, ``Y^T = X_col^T @ W^T``, ``W^T`` cut into panels at compile time.

The CPU computes a convolution with its vectors along the output positions: a direct
convolution along the output width (``conv.py``), a single-image 1x1 one as the matmul
``W[F, C] @ X[C, P]`` along the P = OH*OW positions (``convolutions.py``). Late in a
CNN the positions are few and no multiple of the vector: ResNet-50's 7x7 = 49 pad to 64
in the matmul, and its 3x3 convolutions over 7 columns run on half vectors (8 lanes of
16) padded to 8 columns, 33-36% of the FMA peak. The output channels (512, 2048) are
whole vectors. Here a convolution becomes:

- the rows ``X_col^T[P, KH*KW*C]`` of its windows (for a 1x1 convolution, the
  transposed input, a strided one's positions sliced out of it first; for a larger
  window, copied from the input made channels-last once), copied once per call,
  behind a ``nofold`` pad that keeps ``linalg-fuse-elementwise-ops`` from folding the
  copy into the product;
- one ``linalg.matmul`` ``X_col^T @ panel_j`` per panel of NR output channels, in an
  ``scf.forall`` over the panels. The panels ``[F / NR, KH*KW*C, NR]`` are made at
  compile time in the order the micro-kernel reads them, so nothing is packed per call
  (``matmul.py`` packs no B that is one panel already);
- the ``[F / NR, P, NR]`` result transposed back to NCHW (P x F floats, in cache).

Measured on an AVX-512 Zen 5 (1 thread, single layers with bias and ReLU, interleaved
medians): ResNet-50's 3x3 512 -> 512 over 7x7 and stride 2 from 14x14 took 0.47 and
0.48 of the direct convolution's time, its 1x1 2048 -> 512, 512 -> 2048 (+ residual)
and 1024 -> 2048 stride 2 at 7x7 0.85, 0.97 and 0.93 of the matmul's, DenseNet's 3x3
128 -> 32 at 7x7 0.83; 3x3 256 -> 256 stride 2 to 14x14 0.98, 3x3 128 -> 128 stride 2
to 28x28 1.15, 1x1 layers over 14x14 and 28x28 1.06-1.14 and DenseNet's 3x3 128 -> 32
at 14x14 2.6: the rewrite applies only where the plain schedule's padded work is at
least ``MIN_WORK_SAVED`` times the panels' (``panel_work``; more on AVX2, see there).
A convolution whose rows are narrower than a vector is a matmul over its patches
otherwise (``convolutions_to_matmul``), whose copy and matmul the panels' match more
closely: there a smaller margin, ``MIN_WORK_SAVED_OVER_PATCHES``, decides (at 7x7
outputs the patches pad 49 columns to 64 and the panels pay; at 6x8 they pad none).

Runs on linalg on tensors after ``convert-ecg-to-linalg`` and ``dnnf-winograd`` (whose
3x3 convolutions are gone by then) and before ``dnnf-externalize-weights``, while the
filters are constants (``constant_filters.py``): the weights file then holds the panels.
``mode=always`` rewrites every convolution it can (for tests).
"""

from __future__ import annotations

import math

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import affine_map, generic, insert_at, make_pad, slice_at
from ...transforms.registry import described_by_table
from ..constant_filters import ConstantFilters, calls_by_callee, replace_convolution
from ..errors import CodegenError
from ..linalg_queries import conv_params, is_f32, linalg_ops, producer, reassociation, static_tensor_type
from ..lower_pass import TargetPass
from .depthwise import static_pad
from .target import CpuTarget
from .tiles import (conv_vector_tile, conv_width_throughput, even_column_tile, matmul_register_tile, narrow_conv_rows,
                    rows_alias)
from .transposes import BLOCKS

MODES = ("auto", "always")
# The plain schedule's padded work over the panels' (``panel_work``) from which the
# rewrite pays: with 32 vector registers (see above: 1.27 and more gained 3-53%, 1.14 and
# less lost); with 16 (AVX2, whose panels' micro-kernel holds 4 x 2
# accumulators; measured compiled for x86-64-v3 on the same Zen 5), 1.23 and 1.44 (1x1
# 2048 -> 512 and 3x3 512 -> 512 at 7x7) lost 9-10%.
MIN_WORK_SAVED = 1.25
MIN_WORK_SAVED_16_REGISTERS = 1.5
# The same over a convolution of rows narrower than a vector, a matmul over its patches
# otherwise (``convolutions.convolutions_to_matmul``: a copy and a matmul too). Measured
# on AVX-512 (1 thread, 3x3 and 2x2/2 layers with bias and ReLU, interleaved medians),
# panels over patches: 1.20 times (7x7 outputs, 17 to 128 -> 32 channels, stride 1 and
# 2) took 0.79-0.81 of the time, 1.28-1.30 (7x7, 128 -> 192 and 512 -> 512) 0.81-0.97;
# 1.0 (6x8, 8x8, 4x4 and 3x3 outputs, whose patches pad nothing) 1.00-1.17. On AVX2
# (x86-64-v3), 1.62 (3x3 outputs) took 0.79, 1.0 (4x4) 1.06.
MIN_WORK_SAVED_OVER_PATCHES = 1.1
# The window rows, the transposes and the epilogue left outside the matmul cost per
# output element what KH*KW*C multiply-adds save: in MobileNetV2 (6x6), 64 -> 384 and
# 96 -> 576 channels with ReLU6 and the next layer's pad took 1.21 and 1.05 of the plain
# time, 192 -> 64 to 576 -> 96 0.78-0.91.
MIN_REDUCTION = 128


def convolution_shapes(op):
    """(input, filters, output) shapes of a single-image f32 ``conv_2d_nchw_fchw`` with
    static shapes, else None."""
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.results) != 1:
        return None
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or not is_f32(t) for t in types) or types[0].shape[0] != 1:
        return None
    return tuple(list(t.shape) for t in types)


def panel_width(op, target: CpuTarget, threads: int = 1):
    """NR, the output channels of one panel (the matmul micro-kernel's register tile
    width over P x F), or None when it does not divide the output channels. On several
    threads, which share the panels, narrower whole vectors where those divide evenly
    among them and the widest do not (``tiles.even_column_tile``): Inception v2's 3x3
    96 -> 96 at 14x14 was 3 panels of 32, two on one thread, one on the other. Not where
    the window rows are whole multiples of ``tiles.ALIASED_ROW_BYTES``: the narrower
    panels' taller register tiles (16 rows of 16 columns on AVX-512) read rows that all
    map to one set of the first-level cache, more than its 8 ways (Inception v2's 1x1
    1024 -> 736 at 7x7, 23 panels, alone: 0.71 ms as 46 of 16 on 2 threads against 0.36,
    1.37 against 0.66 on one)."""
    _, (f, c, kh, kw), (_, _, oh, ow) = convolution_shapes(op)
    nr = matmul_register_tile(oh * ow, f, target)[1]
    if f % nr:
        return None
    if f // nr % threads and not rows_alias(c * kh * kw):
        return even_column_tile(f, nr, threads, target) or nr
    return nr


def padded_work(m: int, n: int, target: CpuTarget) -> int:
    """Multiply-adds per reduction step of the matmul micro-kernel on an M x N result,
    padding to whole register tiles and whole vectors included."""
    lanes = target.lanes(32)
    _, nr, pm, pn = matmul_register_tile(m, n, target)
    return pm * (pn // nr) * math.ceil(nr / lanes) * lanes


def plain_work(op, target: CpuTarget) -> float:
    """The padded work per reduction step of the schedule the convolution gets otherwise:
    the matmul ``W @ X`` for a 1x1 one, the same over a copy of its patches (counted as
    ``panel_work`` counts the window rows) for one with rows narrower than a vector
    (``tiles.narrow_conv_rows``), else the direct convolution's rows of WV columns,
    weighted by the throughput of that vector width (``tiles.conv_vector_tile``)."""
    _, (f, _, kh, kw), (_, _, oh, ow) = convolution_shapes(op)
    if (kh, kw) == (1, 1):
        return padded_work(f, oh * ow, target)
    if narrow_conv_rows(ow, f, target):
        return padded_work(f, oh * ow, target) + oh * ow * target.lanes(32)
    _, wv, padded = conv_vector_tile(ow, f, target)
    return f * oh * padded / conv_width_throughput(wv, target)


def panel_work(op, target: CpuTarget) -> int:
    """The panels' padded work per reduction step: the matmul's, plus the window rows'
    copy at about a vector of multiply-adds per element (gathers across the channels:
    3x3 128 -> 32 channels at 14x14, whose copy is as big as its product over only 32
    channels, took 2.6 times the direct convolution's time)."""
    _, (f, _, _, _), (_, _, oh, ow) = convolution_shapes(op)
    return padded_work(oh * ow, f, target) + oh * ow * target.lanes(32)


def panels_pay(op, target: CpuTarget) -> bool:
    """Whether the panels do at least ``MIN_WORK_SAVED`` times (16 vector registers:
    ``MIN_WORK_SAVED_16_REGISTERS``; over patches: ``MIN_WORK_SAVED_OVER_PATCHES``) less
    work than the plain schedule, over a reduction of at least ``MIN_REDUCTION`` and
    whole vectors of output channels."""
    _, (f, c, kh, kw), (_, _, _, ow) = convolution_shapes(op)
    if c * kh * kw < MIN_REDUCTION or f % target.lanes(32):
        return False
    if (kh, kw) != (1, 1) and narrow_conv_rows(ow, f, target):
        saved = MIN_WORK_SAVED_OVER_PATCHES
    else:
        saved = MIN_WORK_SAVED if target.vector_registers >= 32 else MIN_WORK_SAVED_16_REGISTERS
    return plain_work(op, target) >= saved * panel_work(op, target)


def panel_filters(filters: np.ndarray, nr: int) -> np.ndarray:
    """``[F, C, KH, KW]`` filters as panels ``[F / NR, KH*KW*C, NR]``: panel j, row
    (kh, kw, c) holds the weights of output channels ``j*NR ... j*NR + NR - 1``."""
    f, c, kh, kw = filters.shape
    rows = filters.transpose(2, 3, 1, 0).reshape(kh * kw * c, f // nr, nr)
    return np.ascontiguousarray(rows.transpose(1, 0, 2))


def window_rows(op, lanes: int) -> ir.Value:
    """``X_col^T[P, KH*KW*C]``: row ``(oh, ow)`` holds the window of that output position,
    in (kh, kw, c) order, read from the convolution's (padded) input (``_windows``), a copy
    of its own (``_kept``) where an element-wise op makes it."""
    (_, _, _, _), (_, c, kh, kw), (_, _, oh, ow) = convolution_shapes(op)
    rows_t = ir.RankedTensorType.get([oh * ow, kh * kw * c], ir.F32Type.get())
    windows, elementwise = _windows(op, lanes)
    rows = _mlir.tensor.collapse_shape(rows_t, windows, reassociation([[0, 1], [2, 3, 4]]))
    return _kept(rows) if elementwise else rows


def _kept(value: ir.Value) -> ir.Value:
    """``value`` behind a ``nofold`` pad, which keeps ``linalg-fuse-elementwise-ops`` from
    folding the element-wise copy that makes it into the product: a copy of its own."""
    tensor = _mlir.tensor
    value_t = static_tensor_type(value)
    rank = value_t.rank
    kept = tensor.pad(value_t, value, [], [], [0] * rank, [0] * rank, nofold=True)
    block = kept.owner.regions[0].blocks.append(*[ir.IndexType.get()] * rank)
    with ir.InsertionPoint(block):
        tensor.YieldOp(_mlir.arith.constant(value_t.element_type, 0.0))
    return kept


def _windows(op, lanes: int):
    """``[OH, OW, KH, KW, C]``, the window of each output position, and whether an
    element-wise op (a transpose, a gather) makes it. A 1x1 window is the input's
    planes (a strided one's positions sliced out first) made channels-last (square
    blocks; ``narrow_transposes.py`` merges a 7x7 plane's two dims); a larger one over channels that fill square blocks
    (``transposes.py``) is read from the input made channels-last once (the unpadded
    image where its planes are whole vectors, the taps storing zeros for the padding);
    others are gathered from the input by a transposing copy."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    (_, _, h, w), (_, c, kh, kw), (_, _, oh, ow) = convolution_shapes(op)
    (sh, sw), (dh, dw) = conv_params(op)
    f32 = ir.F32Type.get()
    x = op.operands[0]
    shape = [oh, ow, kh, kw, c]
    if (kh, kw) == (1, 1):
        if (sh, sw, h, w) != (1, 1, oh, ow):
            # The positions a strided 1x1 window reads, sliced out first: the transpose
            # then moves square blocks, where a gather read one float of each plane.
            x = tensor.extract_slice(ir.RankedTensorType.get([1, c, oh, ow], f32), x, [], [], [], [0] * 4,
                                     [1, c, oh, ow], [1, 1, sh, sw])
        planes = linalg.transpose(x, outs=[tensor.empty([oh, ow, 1, c], f32)], permutation=[2, 3, 0, 1]).results[0]
        return tensor.expand_shape(ir.RankedTensorType.get(shape, f32), planes, reassociation([[0], [1], [2, 3], [4]]),
                                   [], shape), True
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    position = [ir.AffineConstantExpr.get(0), d[0] * sh + d[2] * dh, d[1] * sw + d[3] * dw]
    image, low, _, value = static_pad(op)
    whole_planes = math.prod(static_tensor_type(image).shape[2:]) % lanes == 0
    if not (w % lanes and c % BLOCKS[-1]) and value == 0.0 and whole_planes:
        # The image made channels-last, its planes whole vectors (square transpose
        # blocks): the taps store zeros where they read the padding, no padded input.
        # Measured (AVX-512, 1 thread, bias and ReLU): ResNet-50's 3x3/2 256 -> 256 from
        # 28x28, the copies 17.7% -> 13.4% of the kernel's samples.
        return _tap_copies(_channels_last(image), shape, (sh, sw), (dh, dw), low[2:]), False
    if w % lanes and c % BLOCKS[-1]:
        window = affine_map(5, position[:1] + [4] + position[1:])  # -> input (0, c, oh*sh, ow*sw)
    else:
        # Through the input made channels-last once: each tap's C channels a contiguous
        # vector load, not a gather across the planes. Measured (AVX-512, 1 thread, with
        # bias and ReLU): 3x3 256 -> 256 stride 2 from 14x14 (rows of 16 padded) 0.84 of
        # the time. Rows that are not whole vectors get zero columns first (never read
        # by a window), so that the transpose moves whole square blocks: from 28x28 (rows
        # of 30) it transposed a lane at a time and cost more than it saved.
        x = _whole_vector_rows(op, lanes)
        width = static_tensor_type(x).shape[3]
        x = linalg.transpose(x, outs=[tensor.empty([1, h, width, c], f32)], permutation=[0, 2, 3, 1]).results[0]
        return _tap_copies(x, shape, (sh, sw), (dh, dw)), False
    return generic([x], [window, ir.AffineMap.get_identity(5)], [tensor.empty(shape, f32)], lambda value, _out: value)[0], True


def _channels_last(image: ir.Value) -> ir.Value:
    """``image`` ``[1, C, H, W]`` transposed to ``[1, H, W, C]`` as ``[C, H*W]`` to ``[H*W, C]``:
    square blocks whenever H*W is whole vectors, where W alone (28) is not."""
    tensor = _mlir.tensor
    _, c, h, w = static_tensor_type(image).shape
    f32 = ir.F32Type.get()
    flat = tensor.collapse_shape(ir.RankedTensorType.get([1, c, h * w], f32), image, reassociation([[0], [1], [2, 3]]))
    moved = _mlir.linalg.transpose(flat, outs=[tensor.empty([1, h * w, c], f32)], permutation=[0, 2, 1]).results[0]
    return tensor.expand_shape(ir.RankedTensorType.get([1, h, w, c], f32), moved, reassociation([[0], [1, 2], [3]]), [],
                               [1, h, w, c])


def _tap_copies(x: ir.Value, shape: list, strides, dilations, padding=(0, 0)) -> ir.Value:
    """``[OH, OW, KH, KW, C]`` out of the channels-last input ``x`` ``[1, H, W, C]``, padded
    by ``padding`` (top, left) zero rows and columns: per tap, a ``linalg.copy`` of a
    strided slice of ``x`` (its C channels at every output position whose window reads
    ``x``) inserted in place, vectorized along C, and zeros at the other positions. One
    gather over all the taps read ``x`` at ``oh*sh + kh*dh``, which is no permutation of
    its loops: the vectorizer left it a load and a store per float. Insertions are no
    element-wise op that fusion could fold into the product, so they need no ``_kept``
    copy behind them either. Measured (AVX-512, 1 thread, with bias and ReLU,
    interleaved minima): 3x3/2 256 -> 256 from 28x28 1.043 -> 0.965 ms, 128 -> 160 from
    28x28 0.359 -> 0.320 ms."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    oh, ow, kh, kw, c = shape
    f32 = ir.F32Type.get()
    result = tensor.empty(shape, f32)
    zero = _mlir.arith.constant(f32, 0.0)  # of the positions whose window reads the padding
    for i in range(kh):
        rows = _reading(oh, strides[0], i * dilations[0] - padding[0], static_tensor_type(x).shape[1])
        for j in range(kw):
            columns = _reading(ow, strides[1], j * dilations[1] - padding[1], static_tensor_type(x).shape[2])
            (r0, r1), (c0, c1) = rows, columns
            for (a0, a1), (b0, b1) in (((0, r0), (0, ow)), ((r1, oh), (0, ow)), ((r0, r1), (0, c0)), ((r0, r1), (c1, ow))):
                if a1 > a0 and b1 > b0:
                    at, sizes = [a0, b0, i, j, 0], [a1 - a0, b1 - b0, 1, 1, c]
                    zeros = linalg.fill(zero, outs=[slice_at(result, at, sizes)])
                    result = insert_at(zeros, result, at)
            if r1 <= r0 or c1 <= c0:
                continue
            tap_t = ir.RankedTensorType.get([r1 - r0, c1 - c0, c], f32)
            first = [r0 * strides[0] + i * dilations[0] - padding[0], c0 * strides[1] + j * dilations[1] - padding[1]]
            source = tensor.extract_slice(tap_t, x, [], [], [], [0, *first, 0], [1, r1 - r0, c1 - c0, c],
                                          [1, strides[0], strides[1], 1])
            at, sizes = [r0, c0, i, j, 0], [r1 - r0, c1 - c0, 1, 1, c]
            target = tensor.extract_slice(tap_t, result, [], [], [], at, sizes, [1] * 5)
            tap = linalg.copy(source, outs=[target])
            result = tensor.insert_slice(tap, result, [], [], [], at, sizes, [1] * 5)
    return result


def _reading(outputs: int, stride: int, offset: int, extent: int) -> tuple:
    """The outputs ``[first, last)`` whose input ``o * stride + offset`` is in ``[0, extent)``."""
    first = min(outputs, max(0, -(offset // stride)))
    last = max(first, min(outputs, (extent - 1 - offset) // stride + 1))
    return first, last


def _whole_vector_rows(op, lanes: int) -> ir.Value:
    """``op``'s (padded) input with zero columns on the right up to a multiple of
    ``lanes``, merged into the ``tensor.pad`` that makes it when there is one."""
    x = op.operands[0]
    extra = -static_tensor_type(x).shape[3] % lanes
    if not extra:
        return x
    source, low, high, value = static_pad(op)
    if not isinstance(value, ir.Value):
        value = _mlir.arith.constant(ir.F32Type.get(), value)
    return make_pad(source, low, high[:3] + [high[3] + extra], value)


def _panel_init(op, panels: int, nr: int) -> ir.Value:
    """The product's accumulator ``[F / NR, P, NR]``: a fill of the convolution's fill
    value, else its accumulator transposed."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    _, f, oh, ow = static_tensor_type(op.results[0]).shape
    p, f32 = oh * ow, ir.F32Type.get()
    init = op.operands[2]
    init_op = init.owner if isinstance(init, ir.OpResult) else None
    if init_op is not None and init_op.name == "linalg.fill":
        return linalg.fill(init_op.operands[0], outs=[tensor.empty([panels, p, nr], f32)])
    flat = tensor.collapse_shape(ir.RankedTensorType.get([f, p], f32), init, reassociation([[0, 1], [2, 3]]))
    split = tensor.expand_shape(ir.RankedTensorType.get([panels, nr, p], f32), flat, reassociation([[0, 1], [2]]), [],
                                [panels, nr, p])
    return linalg.transpose(split, outs=[tensor.empty([panels, p, nr], f32)], permutation=[0, 2, 1]).results[0]


def panel_product(op, rows: ir.Value, panels_value: ir.Value, nr: int) -> ir.Value:
    """``op``'s result from ``rows`` (``window_rows``) and the filter panels ``panels_value``
    (``panel_filters``; ``op`` may read them already): one matmul
    per panel in an ``scf.forall``, transposed back to NCHW; inserted before ``op``."""
    tensor, linalg, scf = _mlir.tensor, _mlir.linalg, _mlir.scf
    out_t = static_tensor_type(op.results[0])
    _, f, oh, ow = out_t.shape
    p, k, panels, f32 = oh * ow, ir.RankedTensorType(rows.type).shape[1], f // nr, ir.F32Type.get()
    loop = scf.ForallOp([0], [panels], [1], [_panel_init(op, panels, nr)])
    j, accumulator = loop.regions[0].blocks[0].arguments
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    with ir.InsertionPoint(loop.regions[0].blocks[0]):
        panel = tensor.extract_slice(ir.RankedTensorType.get([k, nr], f32), panels_value, [j], [], [],
                                     [dynamic, 0, 0], [1, k, nr], [1, 1, 1])
        tile = tensor.extract_slice(ir.RankedTensorType.get([p, nr], f32), accumulator, [j], [], [],
                                    [dynamic, 0, 0], [1, p, nr], [1, 1, 1])
        product = linalg.matmul(rows, panel, outs=[tile])
        with ir.InsertionPoint(scf.InParallelOp().region.blocks[0]):
            tensor.parallel_insert_slice(product, accumulator, [j], [], [], [dynamic, 0, 0], [1, p, nr], [1, 1, 1])
    # Transposed back by a permuting copy into [1, F / NR, NR, P], collapsed only where
    # the panels' dims merge: the convolution's element-wise consumers (bias, residual,
    # activation) fold into the copy there (``permuted_epilogues.py``), one pass over
    # the output where the transpose and the epilogue made two.
    panels_t = ir.RankedTensorType.get([1, panels, p, nr], f32)
    result = tensor.expand_shape(panels_t, loop.results[0], reassociation([[0, 1], [2], [3]]), [], [1, panels, p, nr])
    back = generic([result], [affine_map(4, [0, 1, 3, 2]), ir.AffineMap.get_identity(4)],
                   [tensor.empty([1, panels, nr, p], f32)], lambda value, _out: value)[0]
    flat = tensor.collapse_shape(ir.RankedTensorType.get([1, f, p], f32), back, reassociation([[0], [1, 2], [3]]))
    return tensor.expand_shape(out_t, flat, reassociation([[0], [1], [2, 3]]), [], [1, f, oh, ow])


def channel_panel_convolutions(module_op, target: CpuTarget, always: bool = False, threads: int = 1) -> int:
    """Rewrite the convolutions of ``module_op`` (an ``ir.Module`` or its operation) with
    constant filters where ``panels_pay`` (``always``: every one it can), in panels that
    ``threads`` share evenly where they can (``panel_width``); returns how many."""
    calls = calls_by_callee(module_op.operation)
    count = 0
    for op in linalg_ops(module_op.operation):
        if convolution_shapes(op) is None:
            continue
        nr = panel_width(op, target, threads)
        if nr is None or not (always or panels_pay(op, target)):
            continue
        filters = ConstantFilters(op, calls)
        if not filters.constant():
            continue
        source = producer(op.operands[0])
        with ir.InsertionPoint(op), op.location:
            rows = window_rows(op, target.lanes(32))  # before the filters change shape
            result = panel_product(op, rows, filters.transformed(lambda w: panel_filters(w, nr)), nr)
        replace_convolution(op, result)
        if source is not None and source.name == "tensor.pad" and not list(source.results[0].uses):
            source.erase()  # merged into the pad of ``_whole_vector_rows``
        count += 1
    return count


def always_mode(options: dict, target) -> bool:
    """Whether a panels pass (this one, ``dnnf-weight-panels``) rewrites every op it can
    (``mode=always``) rather than those its rule picks (``auto``); a ``CodegenError`` for
    another mode or a target that is not a CPU."""
    if options["mode"] not in MODES:
        raise CodegenError(f"mode '{options['mode']}' is not one of {', '.join(MODES)}")
    if not isinstance(target, CpuTarget):
        raise CodegenError(f"target '{target.name}' is not a CPU")
    return options["mode"] == "always"


@described_by_table
class ChannelPanelsPass(TargetPass):
    """``channel_panel_convolutions`` as a pass."""

    NAME = "dnnf-channel-panels"

    def lower(self, module, target, threads: int):
        channel_panel_convolutions(module, target, always=always_mode(self.options, target), threads=threads)


__all__ = ["MIN_REDUCTION", "MIN_WORK_SAVED", "MIN_WORK_SAVED_16_REGISTERS", "MIN_WORK_SAVED_OVER_PATCHES", "MODES",
           "ChannelPanelsPass", "always_mode", "channel_panel_convolutions", "convolution_shapes", "panel_filters", "panel_width",
           "panel_work", "panels_pay", "padded_work", "plain_work", "window_rows"]
