"""After bufferization: a short vector read with a row stride of 2 becomes one
contiguous read of the span it covers and a shuffle of its even lanes.

A strided window (a 3x3/2 depthwise convolution or pooling on planes narrower than a
vector, ``windows.py``) reads each tap as ``x[.., 2*ow + j]`` for ``ow < OW``: a
``vector.transfer_read`` of a view whose innermost stride is 2, which LLVM can only do
one lane at a time (a scalar load and an insert per lane: 12 instructions for the 6
lanes of MobileNetV2's 13x13 -> 6x6 rows, 9 taps per row). ``contiguous_strided_reads``
reads the ``2*(L-1) + 1`` elements from the first lane's to the last one's instead (the
same bytes the lanes span, so nothing past the view is read) and keeps lanes 0, 2, 4,
... with a ``vector.shuffle`` (a permute or two).
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import constant_index

STRIDE = 2  # the row stride taken (the strided windows' ones)
MAX_SPAN = 128  # elements read at once: up to eight AVX-512 registers (a 64-wide output row)


def reads_contiguously(stride: int, lanes: int) -> bool:
    """Whether a row of ``lanes`` elements ``stride`` apart is read contiguously here."""
    return stride == STRIDE and STRIDE * (lanes - 1) + 1 <= MAX_SPAN


def _strided_row_read(op):
    """(memref type, vector type) of a ``vector.transfer_read`` this rewrites: unmasked,
    in bounds, at index 0 of a static memref view whose innermost stride is ``STRIDE``
    and the others static, its vector a row (leading dims of one) of at least 2 lanes
    read along the innermost dim; else None."""
    read = op.opview
    if not isinstance(read.base.type, ir.MemRefType):
        return None  # a read of a tensor (code left on tensors, e.g. a constant's)
    source = ir.MemRefType(read.base.type)
    vector = ir.VectorType(read.result.type)
    if read.mask is not None or not source.has_static_shape or vector.rank != source.rank or source.rank == 0:
        return None
    strides, _ = source.get_strides_and_offset()
    lanes = vector.shape[-1]
    if strides[-1] != STRIDE or any(source.is_dynamic_stride_or_offset(s) for s in strides):
        return None
    if any(d != 1 for d in vector.shape[:-1]) or lanes < 2 or not reads_contiguously(strides[-1], lanes):
        return None
    if read.permutation_map.value != ir.AffineMap.get_identity(source.rank):
        return None
    if not all(ir.BoolAttr(b).value for b in read.in_bounds) or any(constant_index(i) != 0 for i in read.indices):
        return None
    return source, vector


def _read_width(lanes: int, span: int) -> int:
    """Elements to read for a row of ``lanes`` strided lanes spanning ``span``: ``2 *
    lanes`` (its last one masked off: not read) when ``lanes`` is a power of two of at
    least 8, else the span. LLVM splits a vector of 31 floats into 16 + 8 + 4 + 2 + 1
    lanes and gathers the even ones from each piece with inserts (113 ``vinsertps``
    for a grouped 3x3/2 convolution's 16-lane rows); two whole registers, the last
    lane masked, are one ``vpermt2ps``."""
    return 2 * lanes if lanes >= 8 and lanes & (lanes - 1) == 0 else span


def _contiguous_read(op, source: ir.MemRefType, vector: ir.VectorType):
    """The row of ``op`` read contiguously and its even lanes shuffled out."""
    memref, vec = _mlir.memref, _mlir.vector
    read = op.opview
    strides, _ = source.get_strides_and_offset()
    lanes, span = vector.shape[-1], STRIDE * (vector.shape[-1] - 1) + 1
    shape = list(source.shape[:-1]) + [span]
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    layout = ir.StridedLayoutAttr.get(dynamic, list(strides[:-1]) + [1])
    f32 = source.element_type
    with ir.InsertionPoint(op), op.location:
        meta = memref.ExtractStridedMetadataOp(read.base)
        view = memref.reinterpret_cast(ir.MemRefType.get(shape, f32, layout), meta.base_buffer, [meta.offset], [], [],
                                       [dynamic], shape, list(strides[:-1]) + [1])
        width = _read_width(lanes, span)
        row_t = ir.VectorType.get([1] * (len(shape) - 1) + [width], f32)
        row = vec.transfer_read(row_t, view, list(read.indices), ir.AffineMap.get_identity(len(shape)), read.padding,
                                [True] * (len(shape) - 1) + [width == span])
        flat = vec.shape_cast(ir.VectorType.get([width], f32), row)
        even = vec.shuffle(flat, flat, [STRIDE * k for k in range(lanes)])
        return vec.shape_cast(vector, even)


def contiguous_strided_reads(module: ir.Module) -> int:
    """Rewrite every f32 row read with innermost stride ``STRIDE`` (see the module
    docstring). Returns how many were rewritten."""
    count = 0
    for op in walk_ops(module.operation, {"vector.transfer_read"}):
        found = _strided_row_read(op)
        if found is None or found[0].element_type != ir.F32Type.get():
            continue
        op.results[0].replace_all_uses_with(_contiguous_read(op, *found))
        op.erase()
        count += 1
    return count


__all__ = ["contiguous_strided_reads", "reads_contiguously"]
