"""Kernels that are a sequential loop (the scatters: a copy of the data, then one
``scf.for`` over the updates, ``conversion/ecg_to_linalg/scatter.py``; TopK: a loop over
rows, ``top_k.py``).

The updates of a scatter may land on one element in any order, so the loop cannot be
spread over threads. Such a kernel is compiled one dispatch per step: the copy tiled
over workgroups and threads like any copy (its arguments read-only: the loop updates
the copy, never a value another kernel may read), then the loop (with what a loop of
one iteration folded into beside it) as a dispatch of a single invocation (a
one-iteration loop over workgroups holding a one-iteration loop over threads, which
``mapping.launch_kernels`` turns into a launch like any other), in parts of a dispatch
each where it would run past the device's budget of loop iterations a thread
(``loop_budget.py``: lavapipe's 65535). TopK's rows are independent: its loop over them
runs a row per thread.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import arith, ir
from ...conversion.ecg_to_linalg.top_k import INDEPENDENT_ATTR
from ...linalg_builders import index_constant
from ..linalg_queries import constant_index
from .loop_budget import loop_iterations, trip_count


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


def _forall(mapping: str, count: int = 1):
    """An ``scf.forall`` of ``count`` iterations (on buffers: no shared outputs) mapped to ``mapping``."""
    loop = _mlir.scf.ForallOp([0], [count], [1], [])
    loop.attributes["mapping"] = ir.ArrayAttr.get([ir.Attribute.parse(mapping)])
    with ir.InsertionPoint(loop.regions[0].blocks[0]):
        terminator = _mlir.scf.InParallelOp()
    return loop, terminator


def _independent(op) -> bool:
    """Whether ``op`` is a loop of independent iterations (``INDEPENDENT_ATTR``) from 0 by 1
    to a constant."""
    if op.name != "scf.for" or INDEPENDENT_ATTR not in op.attributes:
        return False
    lower, upper, step = (constant_index(v) for v in op.operands[:3])
    return lower == 0 and step == 1 and upper is not None


def _over_threads(loop, threads: int):
    """The independent ``loop`` (on buffers, ``0 .. n`` by 1) as a launch of an iteration per
    thread: ``ceil(n / threads)`` workgroups of ``threads``, the last one's surplus idle."""
    count = constant_index(loop.operands[1])
    with ir.InsertionPoint(loop), loop.location:
        blocks, block_end = _forall("#gpu.block<x>", -(-count // threads))
        with ir.InsertionPoint(block_end):
            per_block = min(count, threads)
            lanes, lane_end = _forall("#gpu.thread<x>", per_block)
        with ir.InsertionPoint(lane_end):
            first = arith.muli(blocks.induction_variables[0], index_constant(per_block))
            iteration = arith.addi(first, lanes.induction_variables[0])
            guard = _mlir.scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, iteration, index_constant(count)))
            with ir.InsertionPoint(guard.then_block):
                end = _mlir.scf.YieldOp([])
    body = loop.regions[0].blocks[0]
    body.arguments[0].replace_all_uses_with(iteration)
    for op in [op.operation for op in body.operations][:-1]:
        op.move_before(end)
    loop.erase()


def _runs(function, host_ops) -> list:
    """The top-level ops of ``function`` that compute (not ``host_ops``, not ``scf.forall``:
    a copy's loop over workgroups), in runs of consecutive ones that no such loop
    separates (the host ops between them do not count)."""
    runs, current = [], []
    for op in [op.operation for op in function.regions[0].blocks[0].operations]:
        if op.name not in host_ops and op.name != "scf.forall":
            current.append(op)
        elif op.name == "scf.forall" and current:
            runs.append(current)
            current = []
    return runs + [current] if current else runs


def _chunks(loop, max_iterations: int | None) -> list:
    """``loop`` (an ``scf.for`` without results) as consecutive loops over parts of its
    range, each running at most ``max_iterations`` loop iterations with the loops in its
    body (``loop_budget``); [``loop``] when it fits, has no constant bounds, or one
    iteration alone does not fit (``check_loop_iterations`` then refuses it)."""
    trips = trip_count(loop)
    if max_iterations is None or trips is None or list(loop.results):
        return [loop]
    per_iteration = loop_iterations(loop) + 1
    per_chunk = max_iterations // per_iteration
    if trips * per_iteration <= max_iterations or per_chunk == 0:
        return [loop]
    lower, step = constant_index(loop.operands[0]), constant_index(loop.operands[2])
    chunks = []
    for first in range(0, trips, per_chunk):
        with ir.InsertionPoint(loop), loop.location:
            chunk = loop.clone()
            chunk.operands[0] = index_constant(lower + first * step)
            chunk.operands[1] = index_constant(lower + min(trips, first + per_chunk) * step)
        chunks.append(chunk)
    loop.erase()
    return chunks


def single_invocations(function, threads: int, host_ops, max_iterations: int | None = None) -> int:
    """Move each run of the work ``function`` (on buffers) does outside its launches (its
    loops, and what a loop of one iteration folded into: TopK of one row is a few loops
    and the loads between them) into a one-workgroup, one-thread loop pair, in place of
    the run's last op (so that what stays and the run reads is defined before it).
    A run that is one independent loop runs an iteration per thread instead
    (``_over_threads``, ``threads`` a workgroup); a run that is one loop of more than
    ``max_iterations`` iterations (a scatter's over 65535 updates) runs in parts, a
    launch each, in order (``_chunks``). ``host_ops`` name the ops that stay in
    ``function`` (constants, buffers, views). Returns how many launches."""
    runs = []
    for run in _runs(function, host_ops):
        if len(run) == 1 and _independent(run[0]):
            _over_threads(run[0], threads)
            runs.append(run)
            continue
        one_loop = len(run) == 1 and run[0].name == "scf.for"
        parts = [[chunk] for chunk in _chunks(run[0], max_iterations)] if one_loop else [run]
        for part in parts:
            with ir.InsertionPoint(part[-1]), part[-1].location:
                _, block_end = _forall("#gpu.block<x>")
                with ir.InsertionPoint(block_end):
                    _, thread_end = _forall("#gpu.thread<x>")
            for op in part:
                op.move_before(thread_end)
            runs.append(part)
    return len(runs)


__all__ = ["is_loop_kernel", "read_only_arguments", "single_invocations"]
