"""Element-wise consumers folded into the permuting copy whose collapsed result they read.

Winograd's output transform (``codegen/winograd.py``) ends with a copy that transposes
``[N, K, TH, 4, 4, TW]`` into ``[N, K, TH, 4, TW, 4]``, collapsed into the output
``[N, K, 4 TH, 4 TW]``; the convolution's epilogue (bias, activation, residual add: one
element-wise generic after ``prepare.pipeline``'s fusion) reads that collapsed
result, which upstream's element-wise fusion does not look through. Here such a
consumer becomes the copy itself: it iterates over the copy's loops, reads the copy's
input with the copy's map, and its other operands expanded as the collapse merged the
dims they index (a residual read whole; a bias over channels that the collapse merged)
or, where they only index dims it keeps whole (a bias over ``K``), as they were. The
output is then written once, with the epilogue applied.

The channel panels (``panels_pass.py``) transpose their ``[F / NR, P, NR]`` result back
into ``[1, F / NR, NR, P]`` the same way, collapsed into the convolution's channels:
ResNet-50's 1x1 convolutions at 7x7 then add their bias, residual and ReLU in that
transpose, where they made a second pass over the output.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import with_operands
from ..linalg_queries import (elementwise_consumer, indexing_maps, only_user, parallel_loops, reassociation,
                              reassociation_groups, static_tensor_type)


def _is_permuting_copy(op) -> bool:
    """A linalg.generic of one input and one result, all loops parallel, whose body
    yields its input: a transpose (or copy) of its input."""
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.operands) != 2:
        return False
    if not all(parallel_loops(op) or [False]):
        return False
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    return len(body) == 1 and body[0].operands[0] == block.arguments[0]


def _expanded_operand(value: ir.Value, amap, groups, expanded_shape: list):
    """``value``, read by ``amap`` over the collapsed loops, and its map over the expanded
    loops: each dim it indexes by a loop the collapse merged expanded the same way (a
    residual read whole, a bias over merged channels), the others as they were
    (constant indices, dims the collapse keeps whole); None for any other index
    expression."""
    shape = static_tensor_type(value).shape
    results, operand_groups, operand_shape = [], [], []
    for dim, expr in enumerate(amap.results):
        if isinstance(expr, ir.AffineDimExpr):
            loops = groups[ir.AffineDimExpr(expr).position]
            results += [ir.AffineDimExpr.get(loop) for loop in loops]
            sizes = [expanded_shape[loop] for loop in loops]
        elif isinstance(expr, ir.AffineConstantExpr):
            results.append(expr)
            sizes = [shape[dim]]
        else:
            return None
        operand_groups.append(list(range(len(operand_shape), len(operand_shape) + len(sizes))))
        operand_shape += sizes
    if operand_shape != list(shape):
        expanded_t = ir.RankedTensorType.get(operand_shape, static_tensor_type(value).element_type)
        value = _mlir.tensor.expand_shape(expanded_t, value, reassociation(operand_groups), [], operand_shape)
    return value, ir.AffineMap.get(len(expanded_shape), 0, results)


def _fold(copy, collapse, consumer) -> bool:
    tensor = _mlir.tensor
    groups = reassociation_groups(collapse)
    expanded_t = static_tensor_type(copy.results[0])
    rank = expanded_t.rank
    maps = indexing_maps(consumer)
    copy_map = indexing_maps(copy)[0]
    inputs, new_maps = [], []
    operands = list(consumer.operands)[:-1]
    with ir.InsertionPoint(consumer), consumer.location:
        for value, amap in zip(operands, maps):
            if value == collapse.results[0]:
                inputs.append(copy.operands[0])
                new_maps.append(copy_map)
                continue
            expanded = _expanded_operand(value, amap, groups, list(expanded_t.shape))
            if expanded is None:
                return False
            inputs.append(expanded[0])
            new_maps.append(expanded[1])
        result_t = static_tensor_type(consumer.results[0])
        empty = tensor.empty(list(expanded_t.shape), result_t.element_type)
        fused = with_operands(consumer, inputs, new_maps + [ir.AffineMap.get_identity(rank)], [empty],
                              ["parallel"] * rank)[0]
        result = tensor.collapse_shape(result_t, fused, reassociation(groups))
    consumer.results[0].replace_all_uses_with(result)
    for op in (consumer, collapse, copy):
        op.erase()
    return True


def fold_permuted_epilogues(module: ir.Module) -> int:
    """Fold each element-wise consumer of a collapsed permuting copy into the copy
    (see the module docstring); returns how many were folded."""
    count = 0
    for copy in _permuting_copies(module):
        collapse = only_user(copy.results[0])
        if collapse is None or collapse.name != "tensor.collapse_shape":
            continue
        consumer = elementwise_consumer(collapse)
        if consumer is None or len(list(consumer.regions[0].blocks[0].arguments[-1].uses)):
            continue
        count += _fold(copy, collapse, consumer)
    return count


def _permuting_copies(module: ir.Module) -> list:
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            if _is_permuting_copy(op):
                found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


__all__ = ["fold_permuted_epilogues"]
