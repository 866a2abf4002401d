"""A gather's reads of its source through the source's 1-d view, so that they vectorize.

MLIR's vectorizer leaves a generic holding an n-d ``tensor.extract`` scalar unless
its nd-extract option is set (the code generators do not set it): a gather of rows
then ran one element at a time. A 1-d extract it vectorizes, and classifies its
index: one that is ``addi`` of loop-invariant values and the innermost loop index
becomes a contiguous vector load, anything else a ``vector.gather``.

That classification looks at the ops, not at what they read: an ``addi`` that
reaches the innermost loop index counts as contiguous even when another operand
reads a tensor element that changes along the innermost loop. ``flat_reader`` hence
emits ``addi``s in ``index`` only where the caller states that the data-dependent
reads do not change along the innermost loop (a gathered row: ``contiguous``);
otherwise it sums the offsets in i32 (i64 for sources of 2^31 elements or more) and
casts once, which the vectorizer sees as a gather (and LLVM gets 32-bit lanes, twice
as many as 64-bit ones).
"""

from math import prod

from ..._mlir import arith, ir
from .builders import collapse, constant, extract, index, shape_of


def _static_slice(value):
    """The tensor.extract_slice (static, not rank-reducing) that made ``value``, or None."""
    owner = value.owner
    if not (isinstance(owner, ir.OpView) and owner.operation.name == "tensor.extract_slice"
            and not owner.operation.operands[1:]):
        return None
    steps = list(ir.DenseI64ArrayAttr(owner.operation.attributes["static_strides"]))
    return owner.operation if len(steps) == len(shape_of(value)) else None


def unstrided(x) -> tuple:
    """(source, starts, steps): when ``x`` is cut from ``source`` by static slices (a
    Slice in the same kernel, with or without steps, or a chain of them), the element
    ``i`` of an axis is ``source``'s ``start + step * i``. Reading ``source`` at those
    indices keeps the vectorized gather off the slice's strided buffer, which
    vector.gather cannot lower to LLVM. Otherwise (x, 0s, 1s)."""
    rank = len(shape_of(x))
    starts, steps = [0] * rank, [1] * rank
    while (cut := _static_slice(x)) is not None:
        offsets = list(ir.DenseI64ArrayAttr(cut.attributes["static_offsets"]))
        strides = list(ir.DenseI64ArrayAttr(cut.attributes["static_strides"]))
        starts = [o + s * start for o, s, start in zip(offsets, strides, starts)]
        steps = [s * step for s, step in zip(strides, steps)]
        x = cut.operands[0]
    return x, starts, steps


def _may_be_strided(value) -> bool:
    """Whether ``value``'s buffer may be a strided view: it is a slice (one ``unstrided``
    does not see through), directly or through reshapes."""
    while isinstance(value.owner, ir.OpView):
        name = value.owner.operation.name
        if name == "tensor.extract_slice":
            return True
        if name not in ("tensor.expand_shape", "tensor.collapse_shape"):
            return False
        value = value.owner.operation.operands[0]
    return False


def strided_reader(x):
    """``reads -> x[reads]`` as an n-d tensor.extract of ``unstrided(x)``'s source at
    ``start + step * i``: correct on any buffer, but left scalar by the vectorizer."""
    source, starts, steps = unstrided(x)

    def read(reads):
        return extract(source, [r if (start, step) == (0, 1) else arith.addi(index(start), arith.muli(r, index(step)))
                                for r, start, step in zip(reads, starts, steps)])

    return read


def flat_reader(x, contiguous: bool):
    """``reads -> x[reads]`` (``reads``: one index value per axis of ``x``) through the
    1-d view of ``unstrided(x)``'s source. ``contiguous``: the caller's promise that
    the last read is the innermost loop index and no other read changes along that
    loop; the reads are then a vector load where the last axis has step 1. A source
    that may be a strided view is read by ``strided_reader`` instead."""
    source, starts, steps = unstrided(x)
    if _may_be_strided(source):
        return strided_reader(x)
    source_shape = shape_of(source)
    strides = [prod(source_shape[d + 1:]) for d in range(len(source_shape))]
    flat = source if len(source_shape) == 1 else collapse(source, [list(range(len(source_shape)))])
    if contiguous and steps[-1] == 1:
        offset_type = ir.IndexType.get()
    else:
        offset_type = ir.IntegerType.get_signless(32 if prod(source_shape) < 2 ** 31 else 64)
    start = sum(s * stride for s, stride in zip(starts, strides))

    def read(reads):
        linear = None
        # Every read counts, also those of one-element axes (always 0): were the index
        # tensor's read dropped, an index left invariant along the innermost loop would
        # be vectorized as a 0-d vector load, which does not lower to LLVM.
        for r, step, stride in zip(reads, steps, strides):
            term = r if isinstance(offset_type, ir.IndexType) else arith.index_cast(offset_type, r)
            if step * stride != 1:
                term = arith.muli(term, constant(offset_type, step * stride))
            linear = term if linear is None else arith.addi(linear, term)
        if start:
            linear = arith.addi(constant(offset_type, start), linear)
        if not isinstance(offset_type, ir.IndexType):
            linear = arith.index_cast(ir.IndexType.get(), linear)
        return extract(flat, [linear])

    return read


__all__ = ["flat_reader", "strided_reader", "unstrided"]
