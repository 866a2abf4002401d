"""Kernels that are a sequential loop (the scatters: a copy of the data, then one
``scf.for`` over the updates, ``conversion/ecg_to_linalg/scatter.py``).

The updates of a scatter may land on one element in any order, so the loop cannot be
spread over threads. Such a kernel is compiled one dispatch per step: the copy tiled
over workgroups and threads like any copy (its arguments read-only: the loop updates
the copy, never a value another kernel may read), then the loop as a dispatch of a single
invocation (a one-iteration loop over workgroups holding a one-iteration loop over
threads, which ``mapping.launch_kernels`` turns into a launch like any other).
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ..errors import CodegenError


def is_loop_kernel(function) -> bool:
    """Whether the kernel function's body holds an ``scf.for`` at its top level."""
    return any(op.operation.name == "scf.for" for op in function.regions[0].blocks[0].operations)


def read_only_arguments(function):
    """Mark the arguments of ``function`` ``bufferization.writable = false``: its loops update
    a copy, never a buffer the kernel reads (the lowering's copy of the data folds away on
    tensors, and the kernels' bufferization takes arguments as writable)."""
    count = len(function.regions[0].blocks[0].arguments)
    old = list(ir.ArrayAttr(function.attributes["arg_attrs"])) if "arg_attrs" in function.attributes else []
    merged = []
    for index in range(count):
        entries = {n.name: n.attr for n in ir.DictAttr(old[index])} if index < len(old) else {}
        entries["bufferization.writable"] = ir.BoolAttr.get(False)
        merged.append(ir.DictAttr.get(entries))
    function.attributes["arg_attrs"] = ir.ArrayAttr.get(merged)


def _one_iteration(mapping: str):
    """An ``scf.forall`` of one iteration (on buffers: no shared outputs) mapped to ``mapping``."""
    loop = _mlir.scf.ForallOp([0], [1], [1], [])
    loop.attributes["mapping"] = ir.ArrayAttr.get([ir.Attribute.parse(mapping)])
    with ir.InsertionPoint(loop.regions[0].blocks[0]):
        terminator = _mlir.scf.InParallelOp()
    return loop, terminator


def single_invocations(function) -> int:
    """Put each top-level ``scf.for`` of ``function`` (on buffers, without results) into a
    one-workgroup, one-thread loop pair. Returns how many."""
    loops = [op.operation for op in function.regions[0].blocks[0].operations if op.operation.name == "scf.for"]
    for loop in loops:
        if len(loop.results):
            raise CodegenError(f"a sequential loop of {function.attributes['sym_name']} still returns a value after "
                             "bufferization")
        with ir.InsertionPoint(loop), loop.location:
            blocks, block_end = _one_iteration("#gpu.block<x>")
            with ir.InsertionPoint(block_end):
                _, thread_end = _one_iteration("#gpu.thread<x>")
        loop.move_before(thread_end)
    return len(loops)


__all__ = ["is_loop_kernel", "read_only_arguments", "single_invocations"]
