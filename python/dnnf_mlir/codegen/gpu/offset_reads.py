"""Element-wise producers that a reader reads at an offset, computed in the reader.

A reader of part of a value (Swin's normalization of the rows its cyclic shift moves,
split at its pieces: ``slices.py``) reads it through a map with a constant term, the
slice's offset composed in (``reshapes.py``: ``(r + 2) * 16 + c``). Tiling sizes a
tile's slice of an operand as the map of the tile's last index plus one, the constant
included, so a producer fused into the reader's tiles computes, per thread, a span as
long as the offset (Swin's residual sum: 33 tokens of a private array for each token
its tile reads; the kernel several times slower than one dispatch per op). An
element-wise producer is instead computed in the reader's body, its operands read
through the composed maps, at the offset: nothing extra.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import affine_value, generic, inline_body
from ..linalg_queries import indexing_maps, linalg_input_count, linalg_inputs, parallel_loops


def _has_offset(expr) -> bool:
    """Whether ``expr`` adds a constant other than 0 to the dims it reads."""
    if isinstance(expr, ir.AffineAddExpr):
        add = ir.AffineAddExpr(expr)
        return any(isinstance(side, ir.AffineConstantExpr) and ir.AffineConstantExpr(side).value != 0 or
                   not isinstance(side, ir.AffineConstantExpr) and _has_offset(side) for side in (add.lhs, add.rhs))
    if isinstance(expr, ir.AffineMulExpr):
        product = ir.AffineMulExpr(expr)
        return any(not isinstance(side, ir.AffineConstantExpr) and _has_offset(side)
                   for side in (product.lhs, product.rhs))
    return False


def _elementwise(op) -> bool:
    """A ``linalg.generic`` of one result, all its loops parallel, its result indexed by
    them in order, not reading its init."""
    if op.name != "linalg.generic" or len(op.results) != 1 or not all(parallel_loops(op)):
        return False
    block = op.regions[0].blocks[0]
    if list(block.arguments[len(block.arguments) - 1].uses):
        return False  # reads its init
    output = indexing_maps(op)[-1]
    return output.is_permutation and all(ir.AffineDimExpr(e).position == i for i, e in enumerate(output.results))


def _offset_reads(op) -> list:
    """The input operand numbers of ``op`` (a generic) reading an element-wise producer
    through a map with an offset."""
    if op.name != "linalg.generic":
        return []
    maps = indexing_maps(op)
    found = []
    for number, (value, amap) in enumerate(zip(linalg_inputs(op), maps)):
        producer = value.owner if isinstance(value, ir.OpResult) else None
        if producer is not None and _elementwise(producer) and any(_has_offset(e) for e in amap.results):
            found.append(number)
    return found


def _producer_indices(block, reader) -> dict:
    """The producer's loop indices (its body's ``linalg.index``: a padding's gather) as
    the consumer computes them, ``reader`` (its map of the producer's result) applied
    to its own: a read at an offset reads the element there, not at the consumer's
    own coordinates."""
    indices = [inner for inner in block.operations if inner.name == "linalg.index"]
    if not indices:
        return {}
    loops = [_mlir.linalg.IndexOp(d).result for d in range(reader.n_dims)]
    return {inner.results[0]: affine_value(reader.results[ir.IntegerAttr(inner.attributes["dim"]).value], loops)
            for inner in indices}


def _fused(consumer, number: int):
    """``consumer`` with its input ``number``, an element-wise producer's result, computed
    in its body instead: the producer's inputs read through their maps composed with
    the consumer's map of that input (a new op in its place; the producer erased when
    nothing else reads it)."""
    producer = consumer.operands[number].owner
    maps, produced = indexing_maps(consumer), indexing_maps(producer)
    inputs = linalg_input_count(consumer)
    operands = list(consumer.operands)
    reader = maps[number]
    own = [(v, m) for i, (v, m) in enumerate(zip(operands[:inputs], maps)) if i != number]
    extra = [(v, ir.AffineMap.get(reader.n_dims, 0, [e.compose(reader) for e in m.results]))
             for v, m in zip(linalg_inputs(producer), produced)]
    inits = operands[inputs:]
    consumer_block, producer_block = consumer.regions[0].blocks[0], producer.regions[0].blocks[0]

    def body(*scalars):
        mine, theirs = scalars[: len(own)], scalars[len(own): len(own) + len(extra)]
        outs = scalars[len(own) + len(extra):]
        values = dict(zip(list(producer_block.arguments)[: len(extra)], theirs))
        values.update(_producer_indices(producer_block, reader))
        (value,) = inline_body(producer_block, values)
        arguments = list(mine[:number]) + [value] + list(mine[number:]) + list(outs)
        return inline_body(consumer_block, dict(zip(consumer_block.arguments, arguments)))

    iterators = ["parallel" if p else "reduction" for p in parallel_loops(consumer)]
    with ir.InsertionPoint(consumer), consumer.location:
        operands = own + extra
        results = generic([v for v, _ in operands], [m for _, m in operands] + maps[inputs:], inits, body, iterators)
    for old, new in zip(consumer.results, results):
        old.replace_all_uses_with(new)
    consumer.erase()
    if not list(producer.results[0].uses):
        producer.erase()


def fuse_offset_producers(module: ir.Module) -> int:
    """Compute every element-wise producer that a reader reads at an offset in the
    reader's body (see the module docstring). Returns how many."""
    fused = 0
    changed = True
    while changed:  # the producer's own inputs may be read at an offset in turn
        changed = False
        for op in walk_ops(module.operation, {"linalg.generic"}):
            reads = _offset_reads(op)
            if reads:
                _fused(op, reads[0])
                fused += 1
                changed = True
                break
    return fused


__all__ = ["fuse_offset_producers"]
