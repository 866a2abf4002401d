"""Pads and reversed reads as element-wise gathers, so that a GPU kernel computes them
in the tiles of the ops that read them.

A ``tensor.pad`` tiles into pads of dynamic size, which neither vectorize nor stay in
registers. It becomes a ``linalg.generic`` over its result whose body reads the source
element it takes with ``tensor.extract`` at an index clamped into the source (never
out of bounds) and selects:

    y[i] = all(0 <= i - low < size) ? x[clamp(i - low)] : value

A source computed in the kernel is read by the gather's body, not as an operand that
tiling could slice; when it is an element-wise op (a LRN's squared relu), the gather
evaluates that op's body on the element it reads instead, down to the kernel's
arguments. It then fuses into its consumer's tiles like any element-wise producer.

An element-wise op reading an operand backwards (a Slice with a negative step, a
transposed convolution's flipped kernel: a map such as ``(i) -> (15 - i)``) is tiled
with a wrong slice of that operand (MLIR sizes a tile's slice from its map of the
tile's first and last index, one element here), and its tiles no longer verify. It
reads that operand by ``tensor.extract`` at the map's index instead.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import affine_value, generic, index_constant, inline_body
from ..linalg_queries import (indexing_maps, linalg_input_count, linalg_inputs, pad_value, parallel_loops, reversed_map,
                              static_tensor_type)


def _clamp(i, size: int):
    """``i`` clamped into [0, size)."""
    arith = _mlir.arith
    return arith.minsi(arith.maxsi(i, index_constant(0)), index_constant(size - 1))


def _loop_indices(rank: int) -> list:
    return [_mlir.linalg.IndexOp(d).result for d in range(rank)]


def _static(values) -> bool:
    return all(v != ir.ShapedType.get_dynamic_size() for v in values)


def _pad_to_generic(pad) -> bool:
    arith, tensor = _mlir.arith, _mlir.tensor
    source, result = static_tensor_type(pad.operands[0]), static_tensor_type(pad.results[0])
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    constant = pad_value(pad)
    if source is None or result is None or constant is None or len(pad.operands) != 1 or not _static(low):
        return None
    sizes = list(source.shape)
    with ir.InsertionPoint(pad), pad.location:
        empty = tensor.empty(list(result.shape), result.element_type)
        identity = ir.AffineMap.get_identity(result.rank)

        def body(_out):
            inside, clamped = None, []
            for i, (index, start, size) in enumerate(zip(_loop_indices(result.rank), low, sizes)):
                shifted = arith.subi(index, index_constant(start)) if start else index
                if start == 0 and size == result.shape[i]:
                    clamped.append(index)
                    continue
                ok = arith.andi(
                    arith.cmpi(arith.CmpIPredicate.sge, shifted, index_constant(0)),
                    arith.cmpi(arith.CmpIPredicate.slt, shifted, index_constant(size)),
                )
                inside = ok if inside is None else arith.andi(inside, ok)
                clamped.append(_clamp(shifted, size))
            value = tensor.extract(pad.operands[0], clamped)
            if inside is None:
                return value
            fill = arith.constant(result.element_type, constant.attributes["value"])
            return arith.select(inside, value, fill)

        gathered = generic([], [identity], [empty], body)[0]
    pad.results[0].replace_all_uses_with(gathered)
    pad.erase()
    return gathered.owner


def _elementwise_producer(value):
    """The element-wise ``linalg.generic`` computing ``value`` (one result, every input
    read through a map of its loops without symbols: a projected permutation, or an NCHW
    argument read by a blocked op's ``cb * 4 + ci``), whose body a gather can evaluate
    on the one element it reads; else None."""
    op = value.owner if isinstance(value, ir.OpResult) else None
    if op is None or op.name != "linalg.generic" or len(op.results) != 1:
        return None
    if not all(ir.Attribute.parse("#linalg.iterator_type<parallel>") == kind for kind in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    maps = indexing_maps(op)
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims) or any(m.n_symbols for m in maps):
        return None
    body = op.regions[0].blocks[0]
    if any(inner.name in ("linalg.index", "tensor.extract") for inner in body.operations):
        return None
    if list(list(body.arguments)[-1].uses):
        return None  # reads its accumulator
    return op


def _inline_producer(extract) -> bool:
    """Replace ``tensor.extract`` of an element-wise producer's result by extracts of
    that producer's inputs and its body, cloned: the gather reads what the producer
    reads, and no longer its whole result."""
    producer = _elementwise_producer(extract.operands[0])
    if producer is None:
        return False
    indices = list(extract.operands)[1:]
    maps = indexing_maps(producer)
    body = producer.regions[0].blocks[0]
    inputs = linalg_inputs(producer)
    with ir.InsertionPoint(extract), extract.location:
        values = {}
        for argument, value, amap in zip(body.arguments, inputs, maps):
            at = [affine_value(e, indices) for e in amap.results]
            values[argument] = _mlir.tensor.extract(value, at) if isinstance(value.type, ir.RankedTensorType) else value
        result = inline_body(body, values)[0]
    extract.results[0].replace_all_uses_with(result)
    extract.erase()
    return True


def inline_gathered_producers(gather) -> int:
    """Make the gather ``gather`` read what the element-wise producers of its sources
    read, repeatedly (a pad of relu(x)^2 reads x): a source computed in the kernel is
    captured by the gather's body, not an operand, so tiling cannot slice it, and
    every tile would compute all of it."""
    inlined = 0
    changed = True
    while changed:
        changed = False
        for extract in walk_ops(gather, {"tensor.extract"}):
            if _inline_producer(extract):
                inlined += 1
                changed = True
                break
    return inlined


def gathers_from_pads(module: ir.Module, keep=()) -> int:
    """Rewrite every static ``tensor.pad`` (constant padding value) of ``module`` but
    those in ``keep`` as an element-wise gather reading what its element-wise producers
    read; returns how many."""
    rewritten = 0
    for op in walk_ops(module.operation, {"tensor.pad"}):
        if op in keep:
            continue
        gather = _pad_to_generic(op)
        if gather is not None:
            inline_gathered_producers(gather)
            rewritten += 1
    return rewritten


def _gather_reversed_reads(op):
    """``op`` (an element-wise ``linalg.generic``) with every operand it reads backwards
    read by ``tensor.extract`` in its body instead (a new op in its place); None when it
    reads none."""
    maps, inputs = indexing_maps(op), linalg_inputs(op)
    backwards = [i for i, (value, amap) in enumerate(zip(inputs, maps))
                 if isinstance(value.type, ir.RankedTensorType) and reversed_map(amap)]
    loops = parallel_loops(op)
    if not backwards or not loops or not all(loops):
        return None
    kept = [i for i in range(len(inputs)) if i not in backwards]
    block = op.regions[0].blocks[0]
    arguments = list(block.arguments)

    def body(*scalars):
        values = dict(zip([arguments[i] for i in kept] + arguments[len(inputs):], scalars))
        indices = _loop_indices(maps[0].n_dims)
        for i in backwards:
            values[arguments[i]] = _mlir.tensor.extract(inputs[i], [affine_value(e, indices) for e in maps[i].results])
        return inline_body(block, values)

    with ir.InsertionPoint(op), op.location:
        results = generic([inputs[i] for i in kept], [maps[i] for i in kept] + maps[len(inputs):],
                          list(op.operands)[linalg_input_count(op):], body)
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()
    return results[0].owner


def gathers_from_reversed_reads(module: ir.Module) -> int:
    """Make every element-wise op of ``module`` read the operands it reads backwards by
    gathers (see the module docstring), and what their element-wise producers read;
    returns how many."""
    rewritten = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        gather = _gather_reversed_reads(op)
        if gather is not None:
            inline_gathered_producers(gather)
            rewritten += 1
    return rewritten


__all__ = ["gathers_from_pads", "gathers_from_reversed_reads", "inline_gathered_producers"]
