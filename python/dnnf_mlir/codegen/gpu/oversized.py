"""Kernel arguments larger than one binding of a storage buffer may be, read in chunks.

A Vulkan device binds at most ``maxStorageBufferRange`` bytes of a buffer to one
descriptor: 128 MiB on lavapipe and many phones, less than AlexNet's first
fully-connected weight (151 MB), VGG-19's (411 MB) or GPT-2's token embedding (154 MB).
The buffer itself may be larger; a kernel reads it through several bindings of at most
that many bytes each, consecutive row ranges of its first dim. In the kernel function:

* an op reading the argument along a parallel loop dim (a fully-connected layer's output
  features, its weight stored transposed) becomes one op per chunk, each computing its
  part of the result, concatenated (``concats.py`` then computes each in place);
* an op reducing over it (the weight's rows are the reduction) becomes a chain of ops,
  each adding one chunk's products to the sum of the previous ones;
* a gather (``tensor.extract`` of the argument in an op's body: an embedding lookup,
  or of its 1-d view, read at the n-d index then) reads the chunk its row falls in, each
  chunk's index clamped into it.

Every chunk is a ``tensor.extract_slice`` of the argument, which bufferization makes a
view and the dispatch plan a binding at that view's offset.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import delinearize_index, generic, inline_body
from ..linalg_queries import indexing_maps, linalg_input_count, parallel_loops, static_tensor_type
from .kernels import is_contraction


def _slice_rows(value, start: int, stop: int):
    t = static_tensor_type(value)
    sizes = [stop - start] + list(t.shape[1:])
    result = ir.RankedTensorType.get(sizes, t.element_type)
    return _mlir.tensor.extract_slice(result, value, [], [], [], [start] + [0] * (t.rank - 1), sizes, [1] * t.rank)


def _slice_along(value, axis: int, start: int, stop: int):
    t = static_tensor_type(value)
    offsets, sizes = [0] * t.rank, list(t.shape)
    offsets[axis], sizes[axis] = start, stop - start
    result = ir.RankedTensorType.get(sizes, t.element_type)
    return _mlir.tensor.extract_slice(result, value, [], [], [], offsets, sizes, [1] * t.rank)


def _is_empty(value) -> bool:
    return isinstance(value, ir.OpResult) and value.owner.operation.name == "tensor.empty"


def _chunks(t, limit: int) -> list:
    """[(start, stop)) row ranges of a tensor of type ``t`` of at most ``limit`` bytes each."""
    row = math.prod(t.shape[1:]) * max(8, t.element_type.width) // 8
    rows = max(1, limit // row)
    return [(start, min(start + rows, t.shape[0])) for start in range(0, t.shape[0], rows)]


def _body_clone(op):
    block = op.regions[0].blocks[0]

    def body(*scalars):
        return inline_body(block, dict(zip(block.arguments, scalars)))[0]

    return body


def _split_op(op, operand: int, chunks) -> bool:
    """Split ``op`` along the loop dim its ``operand`` (the big argument) reads in rows."""
    maps = indexing_maps(op)
    row_expr = maps[operand].results[0]
    if not isinstance(row_expr, ir.AffineDimExpr) or len(op.results) != 1:
        return False
    dim = ir.AffineDimExpr(row_expr).position
    parallel = parallel_loops(op)[dim]
    if not parallel and not is_contraction(op):
        return False
    operands = list(op.operands)
    iterators = ["parallel" if p else "reduction" for p in parallel_loops(op)]
    with ir.InsertionPoint(op), op.location:
        pieces, init = [], operands[-1]
        for start, stop in chunks:
            sliced = []
            for index, (value, amap) in enumerate(zip(operands, maps)):
                positions = [i for i, e in enumerate(amap.results)
                             if isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == dim]
                if index == len(operands) - 1 and not parallel:
                    sliced.append(init)  # the running sum
                elif index == len(operands) - 1 and _is_empty(value):
                    t = static_tensor_type(value)
                    shape = list(t.shape)
                    shape[positions[0]] = stop - start
                    sliced.append(_mlir.tensor.empty(shape, t.element_type))  # its own: computed in place
                elif positions and isinstance(value.type, ir.RankedTensorType):
                    sliced.append(_slice_along(value, positions[0], start, stop))
                else:
                    sliced.append(value)
            result = generic(sliced[:-1], maps, [sliced[-1]], _body_clone(op), iterators)[0]
            if parallel:
                pieces.append(result)
            else:
                init = result
        if parallel:
            axis = [ir.AffineDimExpr(e).position for e in maps[-1].results].index(dim)
            result = _mlir.tensor.concat(op.results[0].type, axis, pieces)
        else:
            result = init
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def _split_extract(extract, chunks) -> None:
    """``tensor.extract`` of the big argument -> the chunk its row falls in."""
    arith, tensor = _mlir.arith, _mlir.tensor
    index = ir.IndexType.get()
    source, (row, *rest) = extract.operands[0], list(extract.operands)[1:]
    function_body = source.owner  # a block argument: its block is the function's
    with ir.InsertionPoint.at_block_begin(function_body), extract.location:
        slices = [_slice_rows(source, start, stop) for start, stop in chunks]
    with ir.InsertionPoint(extract), extract.location:
        chosen = None
        for (start, stop), piece in zip(chunks, slices):
            local = arith.subi(row, arith.constant(index, start)) if start else row
            clamped = arith.minsi(arith.maxsi(local, arith.constant(index, 0)), arith.constant(index, stop - start - 1))
            value = tensor.extract(piece, [clamped] + rest)
            if chosen is None:
                chosen = value
            else:
                chosen = arith.select(arith.cmpi(arith.CmpIPredicate.sge, row, arith.constant(index, start)), value, chosen)
    extract.results[0].replace_all_uses_with(chosen)
    extract.erase()


def _unflatten_reads(view, argument) -> None:
    """The ``tensor.extract``s of ``view``, a ``tensor.collapse_shape`` of ``argument`` to
    1-d (a gather's flat read, ``flat_reads.py``), as extracts of ``argument`` at the
    element's n-d index, so that they read chunks as other gathers do."""
    if static_tensor_type(view.results[0]).rank != 1:
        return
    dims = static_tensor_type(argument).shape
    for use in list(view.results[0].uses):
        extract = use.owner
        if extract.name != "tensor.extract":
            continue
        with ir.InsertionPoint(extract), extract.location:
            element = _mlir.tensor.extract(argument, delinearize_index(extract.operands[1], dims))
        extract.results[0].replace_all_uses_with(element)
        extract.erase()
    if not list(view.results[0].uses):
        view.erase()  # a view of the whole argument: a binding of all of it


def read_oversized_arguments_in_chunks(module: ir.Module, limit: int) -> int:
    """Rewrite every read of a kernel function argument of more than ``limit`` bytes (see
    the module docstring). Returns how many reads were rewritten; a read it cannot split
    is left as it is (the plan then names the binding the device refuses)."""
    rewritten = 0
    for function in walk_ops(module.operation, {"func.func"}):
        for argument in function.regions[0].blocks[0].arguments:
            t = static_tensor_type(argument)
            if t is None or t.rank == 0 or math.prod(t.shape) * max(8, t.element_type.width) // 8 <= limit:
                continue
            chunks = _chunks(t, limit)
            for use in list(argument.uses):
                if use.owner.name == "tensor.collapse_shape":
                    _unflatten_reads(use.owner, argument)
            for use in list(argument.uses):
                owner = use.owner
                if owner.name == "tensor.extract":
                    _split_extract(owner, chunks)
                    rewritten += 1
                elif owner.name == "linalg.generic" and use.operand_number < linalg_input_count(owner):
                    rewritten += _split_op(owner, use.operand_number, chunks)
    return rewritten


__all__ = ["read_oversized_arguments_in_chunks"]
