"""Reductions with their neighbours, one row at a time: softmax, layer normalization.

A softmax lowers to five linalg ops (max, subtract + exp, sum, divide, and the fills
of the two accumulators), a layer normalization to more; scheduled one by one, each
writes a whole tensor that the next one reads back. A *row group* is instead one
loop nest over the rows: its root, an element-wise op that reads row reductions, is
tiled to one row (every loop but the ``row_dims`` trailing ones, which the group's
reductions reduce; two short rows: ``rows_per_step``), and every op of its group is
fused into that loop (``fuse_into_containing_op``, producers last to first). Each
op of the loop body is then vectorized whole, a row is one n-D vector, so a row's
intermediates live in vector registers, never in a buffer; its reductions become
horizontal ``vector.reduction`` ops (reassociated into a tree when lowered to LLVM).
A row longer than the registers hold is cut into chunk loops first (``row_chunks.py``),
the next rows prefetched in the first on AVX-512 (``row_prefetch.py``).
With several threads, big groups split the rows among them.

A group holds the linalg ops of one function that feed its root and nothing else:
element-wise generics, fills, and ``linalg.reduce`` over the trailing dims of a
tensor of the root's rank. An op also used outside the group would be computed
twice, so it stays out, and so does anything the row vectors cannot hold (i1 tensors,
backward slices, rows longer than ``MAX_VECTOR_ELEMENTS`` or unrolled into more than
``MAX_UNROLLED_VECTORS`` 1-D vectors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..._mlir import ir
from ..kernel_plan import OpSchedule, Planner
from ..linalg_queries import (is_f32, parallel_loops, producer, reduced_dims, reverses_access, static_tensor_type,
                              touches_i1)
from .row_chunks import chunk_width, give_stored_rows_own_destinations, schedule_chunks
from .row_prefetch import PREFETCH_NEXT_ROWS, prefetches_rows
from .rows import horizontal_reductions, static_loop_ranges
from .tiles import PARALLEL_MIN_ELEMENTS, fits_in_vectors

MEMBER_OPS = ("linalg.generic", "linalg.reduce", "linalg.fill")
PAIRED_ROW_VECTORS = 16  # rows of at most this many vectors are computed two per step


@dataclass
class RowGroup:
    root: ir.Operation  # the element-wise op whose loop nest the group becomes
    members: list  # the ops fused into it, in program order
    row_dims: int  # trailing loops of the root kept whole: one row

    @property
    def shape(self) -> tuple:
        return tuple(static_tensor_type(self.root.results[0]).shape)


def _reduced_trailing_dims(op, rank: int) -> Optional[int]:
    """How many trailing dims a ``linalg.reduce`` of a rank-``rank`` tensor reduces
    (None when it reduces others or its input has another rank)."""
    source = static_tensor_type(op.operands[0])
    if source is None or source.rank != rank:
        return None
    dims = reduced_dims(op)
    if dims != list(range(rank - len(dims), rank)):
        return None
    return len(dims)


def _is_candidate(op) -> bool:
    """An op a row vector can hold: a static tensor result, no i1, no backward reads."""
    if op.name not in MEMBER_OPS or len(op.results) != 1 or static_tensor_type(op.results[0]) is None:
        return False
    return not touches_i1(op) and not reverses_access(op)


def _reads_reduction(op) -> bool:
    return any(producer(v) is not None and producer(v).name == "linalg.reduce" for v in op.operands)


def _grow(root, available: dict) -> set:
    """The ops of ``available`` feeding ``root`` whose every use is in the group (a
    fixed point: dropping an op used elsewhere drops what only it used)."""
    cone, stack = set(), [root]
    while stack:
        for value in stack.pop().operands:
            op = producer(value)
            if op is not None and op in available and op not in cone and _is_candidate(op):
                cone.add(op)
                stack.append(op)
    while True:
        inside = cone | {root}
        outside_uses = {op for op in cone if any(use.owner not in inside for use in op.results[0].uses)}
        if not outside_uses:
            return cone
        cone -= outside_uses


def row_group(root, available: dict) -> Optional[RowGroup]:
    """The row group rooted at ``root`` (an element-wise op reading a reduction) among
    the ops of its function not in another group (``available``: op -> position in
    program order), or None when it has no row reduction or its rows do not fit in
    vectors."""
    out = static_tensor_type(root.results[0]) if len(root.results) == 1 else None
    if root.name != "linalg.generic" or out is None or not is_f32(out) or not all(parallel_loops(root) or [False]):
        return None
    if touches_i1(root) or reverses_access(root) or not _reads_reduction(root):
        return None
    members = sorted(_grow(root, available), key=available.get)
    rank, row_dims = out.rank, 0
    for op in members:
        if op.name == "linalg.reduce":
            reduced = _reduced_trailing_dims(op, rank)
            if reduced is None:
                return None
            row_dims = max(row_dims, reduced)
        elif op.name == "linalg.generic" and not all(parallel_loops(op)):
            return None  # a generic reduction: its dims are not tracked here
    if row_dims == 0 or row_dims == rank:
        return None
    for op in [root, *members]:
        shape = static_tensor_type(op.results[0]).shape
        if len(shape) == rank and not fits_in_vectors(shape[rank - row_dims:]):
            return None
        if len(shape) not in (rank, rank - row_dims):
            return None
    return RowGroup(root, members, row_dims)


def row_groups(ops: list) -> list:
    """The row groups among the linalg ops ``ops`` (program order), last root first;
    an op belongs to one group at most."""
    by_function: dict = {}
    for op in ops:
        by_function.setdefault(op.parent, []).append(op)
    groups = []
    for function_ops in by_function.values():
        available = {op: i for i, op in enumerate(function_ops)}
        for root in reversed(function_ops):
            if root not in available:
                continue
            group = row_group(root, available)
            if group is not None:
                groups.append(group)
                for op in [root, *group.members]:
                    del available[op]
    return groups


def _fuse_all(s, members: list, loop: str) -> list:
    """Fuse the ops of the handles ``members`` (program order) into ``loop``, last
    first; the handles of the fused copies, in program order."""
    fused = []
    for member in reversed(members):
        copy, loop = s.fuse_into(member, loop)
        fused.append(copy)
    return fused[::-1]


def rows_per_step(planner: Planner, group: RowGroup, chunks) -> int:
    """Rows a step of the row loop computes together: two when a row is at most
    ``PAIRED_ROW_VECTORS`` vectors and the rows (of each thread's chunk) pair up
    evenly, else one. A short row is a serial chain of horizontal reductions (max, then
    sum), each waiting on the last; two independent chains in one step overlap (a
    4096x128 softmax: 1.2x faster on AVX-512, 1.1x on AVX2). A long row is bound by
    its element-wise work instead, and two of them spill registers (64x1000: slower)."""
    shape = group.shape
    last = len(shape) - group.row_dims - 1
    chunk = chunks[last] if chunks else 0
    row = math.prod(shape[last + 1:])
    if shape[last] % 2 or chunk % 2 or row > PAIRED_ROW_VECTORS * planner.target.lanes(32):
        return 1
    return 2


def schedule_row_group(planner: Planner, group: RowGroup):
    """One loop over the rows of ``group.root`` with the whole group fused in, each op
    vectorized a row at a time, its reductions horizontal."""
    s = planner.script
    shape = group.shape
    rank = len(shape)
    tag = planner.new_tag(group.root)
    member_tags = [planner.new_tag(op) for op in group.members]
    sizes = [1] * (rank - group.row_dims) + [0] * group.row_dims
    members = [s.match([op.name], tag=member) for op, member in zip(group.members, member_tags)]
    root = s.begin_suppressed(s.match([group.root.name], tag=tag))
    details = {"row": list(shape[rank - group.row_dims:]), "fused": len(group.members)}
    # Several threads: first a chunk of rows per thread (the outermost row dim with a
    # chunk for each), the whole group fused into it, then the row loop within.
    split = [i for i in range(rank - group.row_dims) if shape[i] >= planner.threads]
    if planner.threads > 1 and math.prod(shape) >= PARALLEL_MIN_ELEMENTS and split:
        chunks = [0] * rank
        chunks[split[0]] = math.ceil(shape[split[0]] / planner.threads)
        root, forall = s.tile_forall(root, chunks)
        members = _fuse_all(s, members, forall)
        details["forall"] = chunks
    sizes[rank - group.row_dims - 1] = details["rows_per_step"] = rows_per_step(planner, group, details.get("forall"))
    root, loops = s.tile_for(root, sizes)
    loop = loops[0]
    _fuse_all(s, members, loop)
    width = chunk_width(math.prod(details["row"]), planner.target.lanes(32)) if group.row_dims == 1 else None
    if width is not None:
        give_stored_rows_own_destinations(group, rank)
        schedule_chunks(s, group, root, loop, dict(zip(group.members, member_tags)), width)
        details["chunk"] = width
    body = s.match(list(MEMBER_OPS), within=loop)
    s.vectorize(body)
    horizontal_reductions(s, loop)
    if width is not None:
        s.hoist_accumulators(loop)  # a chunk loop's partial sums: vectors carried in registers
    if width is not None and prefetches_rows(planner.target.lanes(32)):
        step = details["rows_per_step"] * math.prod(details["row"])
        s.annotate(s.match(["scf.for"], within=loop), PREFETCH_NEXT_ROWS, str(step))
    s.end_nested()
    planner.add_schedule(OpSchedule(tag, group.root.name, shape, "row-fused", details))
    for op, member in zip(group.members, member_tags):
        planner.add_schedule(OpSchedule(member, op.name, tuple(static_loop_ranges(op)), f"in {tag}", {}))


__all__ = ["PAIRED_ROW_VECTORS", "RowGroup", "row_group", "row_groups", "rows_per_step", "schedule_row_group"]
