"""The GPU schedule of every kernel function: one dispatch, its root tiled over
workgroups and threads, every other op fused into the root's tiles.

Three levels, each a transform-dialect step written here with the shape-dependent
sizes (``Script``):

1. workgroups: the root (``kernels.Kernel.root``) is tiled with ``scf.forall`` mapped
   to the grid, and every other op of the kernel is fused into that loop, consumers
   first, so that each workgroup computes exactly what its tile of the result needs;
2. threads: the root's workgroup tile is tiled again, mapped to the threads of the
   workgroup, the ops fused into it the same way;
3. in a thread: each op's reduction dims and its parallel dims but the innermost are
   tiled to 1 with ``scf.for`` loops (reductions outermost, so that a contraction's
   register tile stays live across them), the producers of its operands fused into
   those loops, unit dims folded away, and what is left, a row of at most
   ``VECTOR`` elements, vectorized (``vectorization.py``; a matmul's reduction is
   stepped by 4 instead, ``contraction_steps``).

Each root's tiling (a thread's tile, threads, workgroups) is ``tilings.py``'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..kernel_plan import OpSchedule
from ..linalg_queries import indexing_maps, linalg_init, parallel_loops, static_tensor_type
from ..transform_script import TAG, Script
from .contraction_steps import is_matmul_like, reduction_step
from .epilogue_dims import product_dims
from .target import GpuDevice
from .unrolling import REGISTER_ROWS_ATTR
from .staged_inits import own_empty_init
from .kernels import (Kernel, KernelError, RootGroup, direct_producers, has_reduction, is_contraction,
                      loop_ranges, read_product, staged_ops)
from .long_reductions import SPLIT_THREADS, long_reductions, split_dim
from .tilings import (MAX_THREADS, MAX_THREADS_X, VECTOR, Tiling, attention_rows, attention_tiling, beyond_grid,
                      choose_tiling, divisor, rows_dim)


def _mapping(kind: str, trips, order) -> str:
    """The loop's mapping: dims of more than one iteration get linear ids in ``order``
    (0, 1, ...: the first varies fastest), the others the ids after them.
    Canonicalization folds the one-iteration dims away before the loop is mapped, and
    the mapping reads the ids it keeps as the grid's dims: they must be 0 to n-1 (ids
    past them are dropped)."""
    ranked = [d for d in order if trips[d] > 1] + [d for d in order if trips[d] <= 1]
    ids = {d: i for i, d in enumerate(ranked)}
    return ", ".join(f"#gpu.{kind}<linear_dim_{ids[d]}>" for d in range(len(trips)))


def tile_mapped(s: Script, handle: str, sizes, trips, kind: str, order=None):
    """Tile ``handle`` with an ``scf.forall`` of ``trips`` iterations per loop dim of
    the op (``sizes`` per loop dim; 0: not tiled, no dim of the forall), mapped to
    ``kind`` (block or thread), the ids in ``order`` (loop dims, the first varying
    fastest; default: the last dim first)."""
    tiled, forall = s.fresh("t"), s.fresh("forall")
    dims = [d for d, size in enumerate(sizes) if size]
    order = [d for d in (order if order is not None else reversed(range(len(sizes)))) if sizes[d]]
    mapping = _mapping(kind, [trips[d] for d in dims], [dims.index(d) for d in order])
    s.emit(
        f"{tiled}, {forall} = transform.structured.tile_using_forall {handle} tile_sizes {list(sizes)}"
        f" (mapping = [{mapping}]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"
    )
    return tiled, forall


def _inner_tiling(op, row: int = 0):
    """(sizes, interchange) tiling an op (an ``OpPlan``) of one thread's tile with
    ``scf.for`` loops: its reductions, then its parallel dims but the innermost of its
    result, to 1 (a matmul's reduction to its ``step``); the innermost is left whole
    (vectorized), or in vectors when a thread's ``row`` of it holds several."""
    inner = VECTOR if row > VECTOR and row % VECTOR == 0 else 0
    innermost = op.output_dims[-1] if op.output_dims else None
    sizes = [inner if d == innermost else 1 for d in range(op.loops)]
    if op.step is not None:
        loop, step = op.step
        sizes[loop] = step
    order = [d for d, p in enumerate(op.parallel) if not p] + [d for d, p in enumerate(op.parallel) if p]
    return sizes, order


def _tag(op) -> str:
    return ir.StringAttr(op.attributes[TAG]).value


@dataclass
class OpPlan:
    """What the thread level needs of one op of a root group, known before its block
    level is applied (which replaces the op by the clones fused into the loops)."""

    source: str  # the op's tag
    tag: str  # of its clones in the group's loops
    anchor: bool  # tiled on its own in a thread's tile: the root, a reduction, a reduction's init
    producers: list  # tags of the ops computed in its thread tiles: its producers short of staged ones
    output_dims: list  # per dim of its result, the loop it indexes
    parallel: list  # per loop, whether it is parallel
    split: int = 1  # threads its one reduction is split over, when staged (partial results, then combined)
    init: str | None = None  # the tag of the op computing its accumulator's init, if the group computes it
    escapes: bool = False  # its result is read outside the group too (a result of the kernel, yielded by the loops)
    step: tuple | None = None  # (reduction loop, step) of a matmul's register tile (contraction_steps)
    split_dim: int | None = None  # the reduction loop split over ``split`` threads

    @property
    def loops(self) -> int:
        return len(self.parallel)

    @property
    def reduction(self) -> bool:
        return not all(self.parallel)


@dataclass
class GroupPlan:
    """A root group as the block level tiled it: the root's tiling, its ops' plans, and
    the ops staged in shared memory (``kernels.staged_ops``), in program order."""

    name: str
    index: int
    kind: str
    shape: tuple
    tiling: Tiling
    root: OpPlan
    ops: list  # OpPlan of each op, in program order (the root among them)
    staged: list  # OpPlan of each staged op, in program order
    rows_first: int | None = None  # a matmul's rows: the dim of the result whose workgroups vary fastest
    staged_threads: int = MAX_THREADS  # the most threads a loop over a staged op takes


def _anchors(group: RootGroup) -> set:
    """The ops of a group tiled on their own in a thread's tile: the root, reductions and
    their accumulators' inits. The others are fused into the innermost loop of the
    anchors that read them."""
    reductions = [op for op in group.ops if has_reduction(op)]
    inits = set()
    for op in reductions:
        init = linalg_init(op)
        if isinstance(init, ir.OpResult):
            inits.add(init.owner.operation)
    return {op for op in group.ops if op == group.root or op in reductions or op in inits}


def _plan_group(group: RootGroup, name: str, index: int, device: GpuDevice) -> GroupPlan:
    attention = attention_rows(group) if device.attention_tiles else None
    # Staged scores make the loops reading them light: they take P V's threads only
    # (``attention_tiling``). Loops that compute the scores again (a kernel returning
    # the masked scores' mask does not stage them) keep 128 threads to share that work:
    # with 16, DistilBERT's first attention kernel took 2.1x its time.
    shared_scores = attention is not None and any(
        read_product(op, group) for op in staged_ops(group, shared_products=True))
    attention_tile = attention_tiling(group, attention, device, shared_scores) if attention is not None else None
    long = long_reductions(group)  # split over the workgroup's threads: the root's, or staged
    staged = staged_ops(group, shared_products=attention_tile is not None)
    staged = [op for op in group.ops if op in staged or (op in long and op != group.root)]
    staged_threads = attention_tile.workgroup_size if attention_tile is not None and shared_scores else MAX_THREADS
    anchors = _anchors(group)
    members = set(group.ops)

    def computed_with(op) -> list:
        """Tags of the group's ops that ``op``'s thread tiles compute: its producers,
        short of staged ones (read from shared memory)."""
        seen, work = set(), [op]
        while work:
            for producer in direct_producers(work.pop()) & members:
                if producer not in seen and producer not in staged:
                    seen.add(producer)
                    work.append(producer)
        return [_tag_of(p, group, index) for p in group.ops if p in seen]

    def init_of(op):
        value = linalg_init(op)
        owner = value.owner.operation if isinstance(value, ir.OpResult) else None
        return _tag_of(owner, group, index) if owner in members else None

    def escapes(op) -> bool:
        return op != group.root and any(use.owner not in members for use in op.results[0].uses)

    if attention_tile is not None:
        tiling, rows, matmul = attention_tile, attention, True
    else:
        rows = rows_dim(group)
        matmul = rows is not None and is_matmul_like(group.contraction)
        tiling = choose_tiling(group, whole_rows=bool(staged) and group.kind == "reduction",
                               matmul_threads=device.matmul_threads if matmul else None,
                               matmul_rows=device.matmul_rows)
    # Not a thread of one output column (it would reduce its step horizontally); a
    # product written transposed has its columns where the tiling's rows are.
    transposed = matmul and attention_tile is None and rows == product_dims(group)[1]
    stepped = matmul and tiling.thread_tile[rows if transposed else -1] > 1

    def step(op):
        if not stepped:
            return None
        # An attention's staged scores are spread over threads by vec4s of their columns
        # (``_spread``), by single columns where their count is no multiple of 4: such a
        # thread would reduce its step horizontally (in fp16 storage, a mixed-precision
        # dot product that no lowering takes).
        if (attention_tile is not None and op not in (group.root, group.contraction)
                and static_tensor_type(op.results[0]).shape[-1] % VECTOR):
            return None
        return reduction_step(op)

    def split(op) -> tuple:
        """(threads, the loop split over them) of ``op``'s reduction: a long one's
        (``long_reductions``), a staged one's (``_split``), else none."""
        if op in long:
            return SPLIT_THREADS, split_dim(op, SPLIT_THREADS)
        threads = _split(op, staged_threads) if op in staged else 1
        return threads, parallel_loops(op).index(False) if threads > 1 else None

    splits = {op: split(op) for op in group.ops}
    plans = {op: OpPlan(_tag(op), _tag_of(op, group, index), op in anchors, computed_with(op),
                        [ir.AffineDimExpr(e).position for e in indexing_maps(op)[-1].results], parallel_loops(op),
                        splits[op][0], init_of(op), escapes(op), step(op), splits[op][1])
             for op in group.ops}
    return GroupPlan(name, index, group.kind, group.shape, tiling, plans[group.root], [plans[op] for op in group.ops],
                     [plans[op] for op in staged], rows if matmul and not transposed else None, staged_threads)


SPLIT_MIN = 4  # the fewest elements of a reduction a thread takes when the reduction is split


def _split(op, most: int) -> int:
    """The threads (at most ``most``) a staged reduction is split over: a reduction (not
    a contraction) of one loop, its result dims its parallel loops in order; each thread
    reduces a part of every row into partial results in shared memory, which a loop over
    the rows then combines (a softmax's row of 128 by 32 threads, LayerNorm's 768 by 128)."""
    parallel = parallel_loops(op)
    ranges = loop_ranges(op)
    reductions = [d for d, p in enumerate(parallel) if not p]
    outputs = [ir.AffineDimExpr(e).position for e in indexing_maps(op)[-1].results]
    if is_contraction(op) or len(reductions) != 1 or ranges is None or outputs != [d for d, p in enumerate(parallel) if p]:
        return 1
    extent = ranges[reductions[0]]
    threads = divisor(extent, max(1, min(most, extent // SPLIT_MIN)))
    return threads if threads >= SPLIT_MIN else 1


def _tag_of(op, group: RootGroup, index: int) -> str:
    """The tag of ``op``'s clones in group ``index``'s loops (the root keeps its own): a
    producer that several groups share (a merged projection) is fused into each, and a
    later group must find the op outside the loops, not an earlier group's clone."""
    return _tag(op) if op == group.root else f"{_tag(op)}.{index}"


def _per_loop(plan: OpPlan, values, untiled) -> list:
    """``values`` per dim of ``plan``'s result, as a list per loop of the op."""
    result = [untiled] * plan.loops
    for dim, value in zip(plan.output_dims, values):
        result[dim] = value
    return result


def _blocks(s: Script, group: GroupPlan):
    """Tile the root over workgroups and fuse every other op of the group into the loop."""
    tiling = group.tiling
    s.emit(f"// kernel {group.name}: root {group.root.tag}, {group.kind}, {tiling}, staged "
           f"{[op.tag for op in group.staged]}")
    root = s.match(["linalg.generic"], tag=group.root.tag)
    order = list(reversed(group.root.output_dims))  # the innermost dim of the result varies fastest
    if group.rows_first is not None:
        # A matmul's workgroups down its rows first: those reading one slice of B run back
        # to back, while it is in cache (across its columns, each would stream all of B).
        rows = group.root.output_dims[group.rows_first]
        order = [rows] + [d for d in order if d != rows]
    grid = [n // t for n, t in zip(group.shape, tiling.workgroup_tile)]
    _, forall = tile_mapped(s, root, _per_loop(group.root, tiling.workgroup_tile, 0),
                            _per_loop(group.root, grid, 1), "block", order)
    for op in reversed(group.ops):
        if op is group.root:
            continue
        fused, forall = s.fuse_into(s.match(["linalg.generic"], tag=op.source), forall)
        s.annotate(fused, TAG, op.tag)


def _spread(shape, vector: int, budget: int) -> Tiling:
    """A staged op's tile in a workgroup over at most ``budget`` threads: the threads
    from its innermost dim out (at most ``MAX_THREADS_X`` along it, ``vector`` elements
    or more each), each thread the rest of each dim."""
    rank = len(shape)
    threads = [1] * rank
    for dim in reversed(range(rank)):
        step = divisor(shape[dim], vector) if dim == rank - 1 else 1
        threads[dim] = divisor(shape[dim] // step, min(budget, MAX_THREADS_X) if dim == rank - 1 else budget)
        budget //= threads[dim]
    return Tiling(tuple(n // t for n, t in zip(shape, threads)), tuple(threads))


def _threads(s: Script, group: GroupPlan, staged_shapes: dict) -> int:
    """The root's workgroup tile over the workgroup's threads, then each staged op of
    ``group`` the same way, each loop with its producers fused in: a loop over threads
    each (the mapping puts a barrier after each). The root goes first and the staged
    ops from the last: a producer that an earlier loop also reads is then cloned into a
    later loop, not computed by the earlier one and passed on (which fusion does for a
    use after the loop), so that no value goes through shared memory that was not
    staged. Returns the threads the largest loop uses."""
    by_tag = {op.tag: op for op in group.ops}
    root = s.match(["linalg.generic"], tag=group.root.tag)
    block = s.fresh("block")
    s.emit(f'{block} = transform.get_parent_op {root} {{op_name = "scf.forall"}} : (!transform.any_op) -> !transform.any_op')
    loops = [(group.root, group.tiling)] + [
        (op, _spread(staged_shapes[op.tag], 1 if op.reduction else VECTOR, group.staged_threads))
        for op in reversed(group.staged)]
    for op, tiling in loops:
        # A producer an earlier loop left a dead clone reading is yielded by the loop it
        # is fused into, and fusing it on into that loop's scf.for aborts.
        s.eliminate_dead_code(block)
        handle = s.match(["linalg.generic"], tag=op.tag, within=block)
        if op.split > 1:
            _split_reduction(s, op, tiling, handle, by_tag, block)
            continue
        _, forall = tile_mapped(s, handle, _per_loop(op, tiling.thread_tile, 0), _per_loop(op, tiling.threads, 1),
                                "thread", list(reversed(op.output_dims)))
        _fuse_and_tile_anchors(s, op, by_tag, forall, block, tiling.thread_tile[-1] if tiling.thread_tile else 0)
    return max([tiling.workgroup_size for _, tiling in loops] + [op.split for op in group.staged + [group.root]])


def _split_reduction(s: Script, op: OpPlan, rows: Tiling, handle: str, by_tag: dict, block: str):
    """A staged reduction split over ``op.split`` threads (``_split``): each thread
    reduces its part of every row into a partial result (filled by itself), what it
    reads fused in; then the partials combined over ``rows``' threads, a row each, from
    the reduction's own init. The combining op's loops are the result's dims, then the
    split (a softmax over an outer axis reduces its first loop): tiled by result dim."""
    threads = [op.split if d == op.split_dim else 0 for d in range(op.loops)]
    fill, split, combine, forall = s.fresh("fill"), s.fresh("split"), s.fresh("combine"), s.fresh("forall")
    s.emit(f"{fill}, {split}, {combine}, {forall} = transform.structured.tile_reduction_using_forall {handle} "
           f"by num_threads = {threads} tile_sizes = [] mapping = [#gpu.thread<linear_dim_0>] : (!transform.any_op) -> "
           "(!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)")
    s.fuse_into(fill, forall)
    _fuse_and_tile_anchors(s, op, by_tag, forall, block, 0, skip=(op.init,))
    rank = len(op.output_dims)
    _, combined = tile_mapped(s, combine, [*rows.thread_tile, 0], [*rows.threads, 1], "thread", list(reversed(range(rank))))
    if op.init is not None:
        s.fuse_into(s.match(["linalg.generic"], tag=op.init, within=block), combined)


def _fuse_and_tile_anchors(s: Script, op: OpPlan, by_tag: dict, forall: str, block: str, row: int, skip=()):
    """Fuse the ops ``op``'s thread tiles compute (but ``skip``) into its loop over
    threads (consumers first; the clones tagged ``<tag>|<op's tag>``, so that a later
    loop of the workgroup finds only the ops outside the loops), then tile each anchor
    among them with ``scf.for`` loops (``_inner_tiling``), fusing the other ops it reads
    into its innermost loop."""

    def local(tag: str) -> str:
        return tag if tag == op.tag else f"{tag}|{op.tag}"

    producers = [tag for tag in op.producers if tag not in skip]
    for tag in reversed(producers):
        # Each of the op's clones in the workgroup's loop (one per consumer there) that
        # this loop reads.
        each = s.begin_foreach(s.match(["linalg.generic"], tag=tag, within=block))
        attempt = s.begin_suppressed(each)
        fused, _ = s.fuse_into(attempt, forall)
        s.annotate(fused, TAG, local(tag))
        s.end_nested()
        s.end_nested()
    computed = [op.tag] + producers
    # A matmul's: every anchor (its product, the product's init) in the root's vec4s of a row.
    stepped = any(plan.step is not None for plan in by_tag.values())
    for tag in reversed(computed):
        anchor = by_tag[tag]
        if not anchor.anchor:
            continue
        each = s.begin_foreach(s.match(["linalg.generic"], tag=local(tag), within=forall))
        sizes, order = _inner_tiling(anchor, row if anchor is op or stepped else 0)
        if any(sizes):
            _, inner_loops = s.tile_for(each, sizes, interchange=order)
            if stepped:  # a matmul's: its loops over the thread's rows unrolled (``mark_unrolled_loops``)
                for dim, loop in zip([d for d in order if sizes[d]], inner_loops):
                    if anchor.parallel[dim]:
                        s.annotate(loop, REGISTER_ROWS_ATTR, "rows")
            for producer in reversed(anchor.producers):
                # Not a producer the loop over threads yields (upstream's fusion into an
                # scf.for of a producer used after the loop aborts rather than fails).
                if producer in computed and not by_tag[producer].anchor and not by_tag[producer].escapes:
                    arg = s.begin_suppressed(s.match(["linalg.generic"], tag=local(producer), within=forall))
                    s.fuse_into(arg, inner_loops[-1])
                    s.end_nested()
        s.end_nested()


def schedule_blocks(s: Script, kernel: Kernel, prefix: str, device: GpuDevice) -> list:
    """Append the workgroup level of ``kernel``'s schedule to ``s`` (its ops tagged
    ``<prefix><n>``): each root group's root tiled over workgroups, its other ops fused
    into that loop; a matmul's workgroups of ``device.matmul_threads``, its threads of
    ``device.matmul_rows`` rows; on a profile with ``attention_tiles``, attention chains
    tiled as ``attention_tiling`` says in the device's shared memory. Returns a
    ``GroupPlan`` per group, for ``schedule_threads``."""
    for index, op in enumerate(kernel.ops):
        op.attributes[TAG] = ir.StringAttr.get(f"{prefix}{index}")
    plans = [_plan_group(group, kernel.name, index, device) for index, group in enumerate(kernel.groups)]
    for plan in plans:
        _blocks(s, plan)
    return plans


def schedule_threads(s: Script, module, plans: list, max_shared_memory: int) -> tuple:
    """Append the thread level of the schedule of ``plans`` (``schedule_blocks``, applied
    to ``module``) to ``s``; the staged ops' results in the workgroup, read from
    ``module``, must fit ``max_shared_memory`` bytes. Returns (an ``OpSchedule`` per
    group, the threads of a workgroup)."""
    shapes, ops = {}, {}
    for op in walk_ops(module.operation, {"linalg.generic"}):
        if TAG in op.attributes:
            shapes[_tag(op)] = static_tensor_type(op.results[0])
            ops[_tag(op)] = op
    schedules, threads = [], 1
    for group in plans:
        if group.root.tag not in ops:
            continue  # CSE merged its loop with an identical one's (two fills of one init)
        staged = {}
        for op in group.staged:
            tensor = shapes.get(op.tag)
            if tensor is None or not tensor.has_static_shape:
                raise KernelError(f"{group.name}: the workgroup's tile of {op.tag} has no static shape")
            staged[op.tag] = tuple(tensor.shape)
            own_empty_init(ops[op.tag])
        shared = sum(math.prod(shape) * 4 for shape in staged.values())
        if shared > max_shared_memory:
            raise KernelError(f"{group.name}: its staged values take {shared} bytes of shared memory; the device "
                              f"has {max_shared_memory}")
        threads = max(threads, _threads(s, group, staged))
        schedules.append(OpSchedule(group.root.tag, "linalg.generic", group.shape, group.kind, {
            "thread_tile": group.tiling.thread_tile, "threads": group.tiling.threads,
            "workgroup_tile": group.tiling.workgroup_tile, "staged": staged, "shared_bytes": shared,
            "function": group.name}))
    return schedules, threads


__all__ = ["GroupPlan", "OpPlan", "schedule_blocks", "schedule_threads", "tile_mapped"]
