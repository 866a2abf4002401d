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
from .builders import collapse, constant, extract, shape_of


def unstrided(x) -> tuple:
    """(source, starts, steps): when ``x`` is cut from ``source`` with steps (a strided
    tensor.extract_slice: a Slice in the same kernel), the element ``i`` of an axis is
    ``source``'s ``start + step * i``; reading ``source`` at those indices keeps the
    vectorized gather off a strided buffer, which vector.gather cannot lower to LLVM.
    Otherwise (x, 0s, 1s)."""
    rank = len(shape_of(x))
    owner = x.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "tensor.extract_slice" and not owner.operation.operands[1:]:
        steps = list(ir.DenseI64ArrayAttr(owner.operation.attributes["static_strides"]))
        if any(step != 1 for step in steps) and len(steps) == rank:
            starts = list(ir.DenseI64ArrayAttr(owner.operation.attributes["static_offsets"]))
            return owner.operation.operands[0], starts, steps
    return x, [0] * rank, [1] * rank


def flat_reader(x, contiguous: bool):
    """``reads -> x[reads]`` (``reads``: one index value per axis of ``x``) through the
    1-d view of ``unstrided(x)``'s source. ``contiguous``: the caller's promise that
    the last read is the innermost loop index and no other read changes along that
    loop; the reads are then a vector load where the last axis has step 1."""
    source, starts, steps = unstrided(x)
    sizes, source_shape = shape_of(x), shape_of(source)
    strides = [prod(source_shape[d + 1:]) for d in range(len(source_shape))]
    flat = source if len(source_shape) == 1 else collapse(source, [list(range(len(source_shape)))])
    if contiguous and steps[-1] == 1:
        offset_type = ir.IndexType.get()
    else:
        offset_type = ir.IntegerType.get_signless(32 if prod(source_shape) < 2 ** 31 else 64)
    start = sum(s * stride for s, stride in zip(starts, strides))

    def read(reads):
        linear = None
        for r, size, step, stride in zip(reads, sizes, steps, strides):
            if size == 1:  # the read is 0: only the start counts
                continue
            term = r if isinstance(offset_type, ir.IndexType) else arith.index_cast(offset_type, r)
            if step * stride != 1:
                term = arith.muli(term, constant(offset_type, step * stride))
            linear = term if linear is None else arith.addi(linear, term)
        if linear is None or start:
            offset = constant(offset_type, start)
            linear = offset if linear is None else arith.addi(offset, linear)
        if not isinstance(offset_type, ir.IndexType):
            linear = arith.index_cast(ir.IndexType.get(), linear)
        return extract(flat, [linear])

    return read


__all__ = ["flat_reader", "unstrided"]
