"""Fix-ups after one-shot bufferization: results written in place into the caller's
out-parameters, and the ``memref.copy`` ops left over turned into ``linalg.copy`` ops,
the static ones tagged (``COPY_TAG_PREFIX``) for a later step to schedule
(``tagged_copies`` finds them again).
"""

from __future__ import annotations

from .. import _mlir
from .._mlir import ir
from ..ir_walk import walk_ops
from .lowered_module import functions
from .linalg_queries import is_i1
from .transform_script import TAG

RESHAPES = ("memref.collapse_shape", "memref.expand_shape")
COPY_TAG_PREFIX = "c"  # the TAG of the n-th copy copies_to_linalg tags is f"c{n}"


def _erase_with_deallocs(value):
    for use in list(value.uses):
        if use.owner.name == "memref.dealloc":
            use.owner.erase()


def results_in_place(module: ir.Module):
    """Write results straight into the out-parameters.

    ``buffer-results-to-out-params`` copies each returned buffer into its new
    out-parameter; when that buffer is a static allocation of the function, the
    allocation is replaced by the out-parameter and the copy disappears (what the
    pass's ``hoist-static-allocs`` option does, which needs an interface this build
    does not register for memref.alloc). When the returned buffer is a reshape of
    such an allocation (a kernel whose last op, a matmul or a transpose, is followed by
    an expand or collapse of its result, or a chain of them), the allocation is replaced
    by the inverse reshapes of the out-parameter; a reshape stays where something else reads it too
    (a result that a GPU kernel's caller reshapes, returns and passes on to another
    kernel: the copy was the entry function's, which no GPU kernel does).
    """
    for func in functions(module):
        if len(func.regions[0].blocks) == 0:
            continue
        block = func.regions[0].blocks[0]
        for op in list(block.operations):
            if op.name != "memref.copy":
                continue
            source, target = op.operands
            if not isinstance(target, ir.BlockArgument) or target.owner != block or len(list(target.uses)) != 1:
                continue
            chain = []  # the reshapes from the copied value back to its buffer
            while isinstance(source, ir.OpResult) and source.owner.name in RESHAPES:
                chain.append(source.owner)
                source = source.owner.operands[0]
            alloc = source.owner if isinstance(source, ir.OpResult) else None
            if alloc is None or alloc.name != "memref.alloc" or alloc.parent != op.parent or len(alloc.operands) != 0:
                continue
            if not chain and source.type != target.type:
                continue
            _erase_with_deallocs(source)
            op.erase()
            view = target
            with ir.InsertionPoint(alloc), alloc.location:
                for reshape in chain:
                    view = _inverse_reshape(reshape, view, reshape.operands[0].type)
            source.replace_all_uses_with(view)
            for reshape in chain:
                if not list(reshape.results[0].uses):
                    reshape.erase()
            alloc.erase()


def _inverse_reshape(reshape, value, result_type):
    """``value`` (what ``reshape`` makes) reshaped back to ``result_type`` (its source)."""
    memref = _mlir.memref
    groups = reshape.attributes["reassociation"]
    if reshape.name == "memref.collapse_shape":
        return memref.expand_shape(result_type, value, groups, [], ir.MemRefType(result_type).shape)
    return memref.collapse_shape(result_type, value, groups)


def copies_to_linalg(module: ir.Module):
    """memref.copy -> linalg.copy (scheduled later; the wheel ships no ``memrefCopy``).

    A fill of a fresh buffer right before a copy that overwrites all of it (what a
    ``tensor.pad`` used for packing bufferizes to) is erased. The static copies (but
    of i1) are tagged, in program order.
    """
    linalg = _mlir.linalg
    tagged = 0
    for op in walk_ops(module.operation, {"memref.copy"}):
        source, target = op.operands
        ops = list(op.operation.block.operations)
        position = ops.index(op.operation)
        previous = ops[position - 1] if position > 0 else None
        fresh = isinstance(target, ir.OpResult) and target.owner.name == "memref.alloc"
        if (
            fresh
            and previous is not None
            and previous.name in ("linalg.fill", "linalg.map")
            and len(previous.results) == 0
            and list(previous.operands)[-1] == target
        ):
            previous.erase()
        shape = ir.MemRefType(target.type).shape
        with ir.InsertionPoint(op), op.location:
            linalg.copy(source, outs=[target])
        ops = list(op.operation.block.operations)
        new_op = ops[ops.index(op.operation) - 1]
        # i1 copies stay scalar: vectors of i1 are loaded / stored as packed bits.
        if shape and all(d != ir.ShapedType.get_dynamic_size() for d in shape) and not is_i1(target):
            new_op.attributes[TAG] = ir.StringAttr.get(f"{COPY_TAG_PREFIX}{tagged}")
            tagged += 1
        op.erase()


def tagged_copies(module: ir.Module) -> list:
    """``(tag, static shape)`` of the copies ``copies_to_linalg`` tagged that are still
    there, in program order (the order it tagged them)."""
    copies = []
    for op in walk_ops(module.operation, {"linalg.copy"}):
        tag = ir.StringAttr(op.attributes[TAG]).value if TAG in op.attributes else ""
        if tag.startswith(COPY_TAG_PREFIX):
            copies.append((tag, tuple(ir.MemRefType(op.operands[-1].type).shape)))
    return copies


__all__ = ["COPY_TAG_PREFIX", "copies_to_linalg", "results_in_place", "tagged_copies"]
