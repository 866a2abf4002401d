"""Splitting big functions into pieces: LLVM's optimizer and code generator are
superlinear in the size of a function, so a function with more than ``2 * SPLIT_OPS``
nested ops becomes private noinline pieces called in order.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ..lowered_module import functions, symbol_name


# Ops (nested ones included) per piece of a big function: LLVM's optimizer and code
# generator are superlinear in the size of a function.
SPLIT_OPS = 6000


_CLONED = {"arith.constant", "ub.poison", "memref.get_global", "llvm.mlir.constant"}


def _top_level(op, function):
    while op is not None:
        parent = op.parent
        if parent is None:
            return None
        if parent == function:
            return op
        op = parent
    return None


def split_functions(module: ir.Module, max_ops: int = SPLIT_OPS) -> int:
    """Split the body of each big function (straight-line, on buffers) into private
    noinline functions of about ``max_ops`` nested ops, called in order.

    Constants (and ``memref.get_global``) used by a piece are cloned into it (as
    arguments they would hide loop bounds); other values crossing pieces become
    arguments / results. Returns the number of pieces made.
    """
    made = 0
    for func in functions(module):
        if len(func.regions[0].blocks) == 0:
            continue
        function = func.operation
        block = func.regions[0].blocks[0]
        operations = list(block.operations)
        body, terminator = operations[:-1], operations[-1]
        sizes = []
        for op in body:
            count = [0]

            def visit(_op, count=count):
                count[0] += 1
                return ir.WalkResult.ADVANCE

            op.walk(visit)
            sizes.append(count[0])
        if sum(sizes) <= 2 * max_ops:
            continue
        if any(op.name == "memref.alloca" for op in body):
            continue  # a stack buffer must not outlive its piece
        chunks, current, total = [], [], 0
        for op, size in zip(body, sizes):
            if op.name in _CLONED and not op.regions:
                continue  # stays in the function; cloned where used
            current.append(op)
            total += size
            if total >= max_ops:
                chunks.append(current)
                current, total = [], 0
        if current:
            chunks.append(current)
        if len(chunks) < 2:
            continue
        name = symbol_name(func)
        for index, chunk in enumerate(chunks):
            members = set(chunk)
            live_in, cloned, seen = [], [], set()

            def visit(op, members=members, live_in=live_in, cloned=cloned, seen=seen):
                for value in op.operands:
                    if value in seen:
                        continue
                    if isinstance(value, ir.OpResult):
                        owner = value.owner
                        if owner.parent != function or owner in members:
                            continue
                        seen.add(value)
                        if owner.name in _CLONED and len(owner.operands) == 0 and not owner.regions:
                            cloned.append(value)
                        else:
                            live_in.append(value)
                    else:
                        if ir.BlockArgument(value).owner == block:
                            seen.add(value)
                            live_in.append(value)
                return ir.WalkResult.ADVANCE

            for op in chunk:
                op.walk(visit)
            live_out = [
                result
                for op in chunk
                for result in op.results
                if any(_top_level(use.owner, function) not in members for use in result.uses)
            ]
            with ir.InsertionPoint(function), function.location:
                part = _mlir.func.FuncOp(
                    f"{name}_part{index}", ([v.type for v in live_in], [v.type for v in live_out]), visibility="private"
                )
                # func-to-llvm turns an "llvm."-prefixed attribute into the llvm.func one
                part.attributes["llvm.no_inline"] = ir.UnitAttr.get()
                part_block = part.add_entry_block()
            with ir.InsertionPoint(part_block), function.location:
                ret = _mlir.func.ReturnOp(live_out)
            for op in chunk:
                op.move_before(ret)
            part_op = part.operation
            replacements = list(zip(live_in, part_block.arguments))
            with ir.InsertionPoint.at_block_begin(part_block):
                for value in cloned:
                    replacements.append((value, value.owner.clone().results[0]))
            for value, new in replacements:
                for use in list(value.uses):
                    if _top_level(use.owner, part_op) is not None:
                        use.owner.operands[use.operand_number] = new
            with ir.InsertionPoint(terminator), function.location:
                call = _mlir.func.CallOp(part, live_in)
            for value, result in zip(live_out, call.results):
                for use in list(value.uses):
                    if _top_level(use.owner, part_op) is None:
                        use.owner.operands[use.operand_number] = result
            made += 1
    return made



__all__ = ["SPLIT_OPS", "split_functions"]
