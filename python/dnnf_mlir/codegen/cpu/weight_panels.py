"""``dnnf-weight-panels``: matmuls with constant weights read them as panels made at
compile time, as onnxruntime's prepacked MatMul does, not packed on every call.

The matmul schedule (``matmul.py``) packs each K x NR panel of B into a buffer before
its row tiles read it: on every call, a strided gather of the whole B (GPT-2's MLP
weights, 768 x 3072, are 9.4 MB read K rows of 128 bytes at a time). Where B is a
constant, this pass cuts it into the panels ``[ceil(N / NR), K, NR]`` the micro-kernel reads,
at compile time, and computes ``A @ B`` as one matmul per panel in an ``scf.forall``
over the panels, each writing its NR columns of the result (``matmul.py`` packs no B
that is one panel already); the N % NR columns of a partial last panel (a vocabulary
of 1000) are one more matmul after the loop. The accumulator's init, a fill or a
broadcast bias row, is made per panel; any other init is sliced. Element-wise
consumers stay after the loop: moved into it, as the matmul's epilogue in registers,
GPT-2's tanh-GELU made its up-projection slower (0.907 of the packing schedule's time
against 0.846 after the loop).

Measured on an AVX-512 Zen 5 (1 thread, a loaded machine: the calling thread's CPU
time, interleaved, best of rounds): GPT-2's 128 x 3072 @ 3072 x 768 went from 79% to
90% of the FMA peak (0.88 of the time), 128 x 768 @ 768 x 3072 with its GELU from 70%
to 82% (0.85); whole models against onnxruntime (ORT_ENABLE_ALL, same process), before
-> after: GPT-2 0.99 -> 0.88, the small Llama 0.90 -> 0.72, BERT-base 0.90 -> 0.83,
DistilBERT 0.87 -> 0.80, ALBERT-base 0.90 -> 0.83, MobileBERT 0.89 -> 0.89. Compiled
for x86-64-v3 (AVX2), GPT-2, Llama and BERT-base took 0.99-1.00 of the time before.

A matmul reading constant B transposed (ONNX Gemm with ``transB``, a classifier's
``[N, K]`` weights) gets its panels from B^T, made at compile time too: without them the
CPU pipeline transposes B into a new buffer on every call (``normalize_matmuls``), which
made a Gemm of 7 x 2048 by 1000 x 2048^T 3.3x slower than onnxruntime (16 rows: 10.9x).
Every such matmul of more than one row is rewritten (one row is a matrix-vector product,
``matvec.py``, which reads the ``[N, K]`` layout as it is).

Runs on linalg on tensors after ``convert-ecg-to-linalg`` and before
``dnnf-externalize-weights``, while the weights are constants (``constant_filters.py``):
the weights file then holds the panels. ``mode=always`` rewrites every matmul it can,
``auto`` those whose B the schedule would pack (``matmul.packs_b``).
"""

from __future__ import annotations

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import index_constant, insert_at, slice_at
from ...transforms.registry import described_by_table
from ..constant_filters import ConstantFilters, calls_by_callee, replace_convolution
from ..contractions import transposed_operands
from ..linalg_queries import has_default_maps, is_f32, linalg_ops, producer, static_tensor_type
from ..lower_pass import TargetPass
from .matmul import packs_b
from .panels_pass import always_mode
from .target import CpuTarget
from .tiles import matmul_register_tile


def reads_b_transposed(op) -> bool:
    """Whether the 2-D ``linalg.matmul`` ``op`` reads B as ``[N, K]`` (and A, C as usual)."""
    return op.name == "linalg.matmul" and transposed_operands(op) == (False, True)


def panel_width(op, target: CpuTarget, always: bool = False):
    """NR, the columns of one panel (the matmul's register tile width), when ``op`` is a
    static f32 2-D ``linalg.matmul`` whose B is more than one panel of NR columns (the
    last one may be partial) and whose schedule would pack it (``always``: any such
    matmul), or that reads B transposed from more than one row of A (B^T's panels then:
    N itself when N is at most NR, one panel); else None."""
    transposed = reads_b_transposed(op)
    if op.name != "linalg.matmul" or not (transposed or has_default_maps(op)):
        return None
    types = [static_tensor_type(v) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(t is None or not is_f32(t) for t in types):
        return None
    (m, k), n = types[0].shape, types[2].shape[1]
    mr, nr, _, _ = matmul_register_tile(m, n, target)
    if transposed:
        return min(n, nr) if m > 1 else None
    if n <= nr:
        return None
    return nr if always or packs_b(m, k, mr) else None


def weight_panels(weights: np.ndarray, nr: int) -> np.ndarray:
    """``[K, N]`` weights as panels ``[ceil(N / NR), K, NR]``: panel j holds columns
    ``j*NR ... j*NR + NR - 1``, row by row (zeros past N in the last one)."""
    k, n = weights.shape
    panels = -(-n // nr)
    padded = np.pad(weights, [(0, 0), (0, panels * nr - n)])
    return np.ascontiguousarray(padded.reshape(k, panels, nr).transpose(1, 0, 2))


def _panel_init(init: ir.Value, column, m: int, nr: int, accumulator: ir.Value) -> ir.Value:
    """The init of one panel's ``[M, NR]`` tile at ``column`` (an index value or an
    int): the init's fill, or its broadcast row's NR values, made for the tile; else
    the tile of ``accumulator`` (the loop's shared output, the whole init)."""
    linalg, tensor, f32 = _mlir.linalg, _mlir.tensor, ir.F32Type.get()
    source = producer(init)
    if source is not None and source.name == "linalg.fill":
        return linalg.fill(source.operands[0], outs=[tensor.empty([m, nr], f32)])
    if source is not None and source.name == "linalg.broadcast" and _broadcasts_rows(source):
        row = slice_at(source.operands[0], [column], [nr])
        return linalg.broadcast(row, outs=[tensor.empty([m, nr], f32)], dimensions=[0])
    return slice_at(accumulator, [0, column], [m, nr])


def _broadcasts_rows(broadcast) -> bool:
    """Whether ``broadcast`` repeats a 1-D row over the rows of a 2-D result."""
    return (ir.RankedTensorType(broadcast.operands[0].type).rank == 1
            and list(ir.DenseI64ArrayAttr(broadcast.attributes["dimensions"])) == [0])


def panel_matmul(op, panels: ir.Value, nr: int) -> ir.Value:
    """``op``'s result (``A @ B`` into its init) from A and B's panels ``panels``
    (``panel_product``); inserted before ``op``."""
    return panel_product(op.operands[0], op.operands[2], static_tensor_type(op.results[0]).shape[1], panels, nr)


def panel_product(a: ir.Value, init: ir.Value, n: int, panels: ir.Value, nr: int, first: int = 0) -> ir.Value:
    """``A @ B`` (N columns) into ``init`` from B's panels ``panels`` (from panel
    ``first`` on: read in place, the panels stay a kernel argument that
    ``panel_prefetch`` streams): one matmul per whole panel in an ``scf.forall``, each
    writing its NR columns, then one over the first N % NR columns of the last panel if
    N is no multiple of NR; inserted at the insertion point."""
    tensor, linalg, scf, f32 = _mlir.tensor, _mlir.linalg, _mlir.scf, ir.F32Type.get()
    m, k = static_tensor_type(a).shape
    source = producer(init)
    sliced_init = source is None or source.name not in ("linalg.fill", "linalg.broadcast") or (
        source.name == "linalg.broadcast" and not _broadcasts_rows(source))
    shared = init if sliced_init else tensor.empty([m, n], f32)
    whole, partial = divmod(n, nr)
    loop = scf.ForallOp([0], [whole], [1], [shared])
    j, accumulator = loop.regions[0].blocks[0].arguments
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    with ir.InsertionPoint(loop.regions[0].blocks[0]):
        column = _mlir.arith.muli(j, index_constant(nr))
        index = _mlir.arith.addi(j, index_constant(first)) if first else j
        panel = tensor.extract_slice(ir.RankedTensorType.get([k, nr], f32), panels, [index], [], [],
                                     [dynamic, 0, 0], [1, k, nr], [1, 1, 1])
        tile = _panel_init(init, column, m, nr, accumulator)
        product = linalg.matmul(a, panel, outs=[tile])
        with ir.InsertionPoint(scf.InParallelOp().region.blocks[0]):
            tensor.parallel_insert_slice(product, accumulator, [column], [], [], [0, dynamic], [m, nr], [1, 1])
    if not partial:
        return loop.results[0]
    last = tensor.extract_slice(ir.RankedTensorType.get([k, partial], f32), panels, [], [], [],
                                [first + whole, 0, 0], [1, k, partial], [1, 1, 1])
    tile = _panel_init(init, whole * nr, m, partial, loop.results[0])
    return insert_at(linalg.matmul(a, last, outs=[tile]), loop.results[0], [0, whole * nr])


def weight_panel_matmuls(module_op, target: CpuTarget, always: bool = False) -> int:
    """Rewrite the matmuls of ``module_op`` with constant B where ``panel_width`` says
    so (``always``: every one it can); returns how many."""
    calls = calls_by_callee(module_op.operation)
    count = 0
    for op in linalg_ops(module_op.operation):
        nr = panel_width(op, target, always)
        if nr is None:
            continue
        weights = ConstantFilters(op, calls)
        if not weights.constant():
            continue
        with ir.InsertionPoint(op), op.location:
            transposed = reads_b_transposed(op)
            panels = weights.transformed(lambda w: weight_panels(w.T if transposed else w, nr))
            result = panel_matmul(op, panels, nr)
        replace_convolution(op, result)
        count += 1
    return count


@described_by_table
class WeightPanelsPass(TargetPass):
    """``weight_panel_matmuls`` as a pass."""

    NAME = "dnnf-weight-panels"

    def lower(self, module, target, threads: int):
        weight_panel_matmuls(module, target, always=always_mode(self.options, target))


__all__ = ["WeightPanelsPass", "panel_matmul", "panel_product", "panel_width", "reads_b_transposed",
           "weight_panel_matmuls", "weight_panels"]
