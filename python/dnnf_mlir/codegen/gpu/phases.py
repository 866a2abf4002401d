"""A phased kernel: "compute the contraction once, then the rest".

A kernel reading part of a value computed from a contraction (LLaMA's merged Q, K, V
projection, read as three slices and its queries' halves rotated; a recurrent layer's
first step, reading its gates from the whole sequence's input projection) cannot fuse
that value into its readers' tiles without each of them computing the contraction
again (LLaMA's rotation ran 3x slower fused, ``reshapes._from_contraction``); one
dispatch per op instead costs a launch and a buffer round trip for every op. Phased,
such a value (the contraction with its element-wise epilogue) is a root of its own
(``phase_boundaries``), computed by the first launch into a buffer of the kernel;
the groups reading it run in the next, merged into one launch (``mapping.py``): two
launches, the minimum without recomputation. ``PHASE_ATTR`` on each group's loop over
workgroups says which launch it runs in; ``group_loops_by_phase`` puts a phase's loops
together. A value read through a view that no map can express is split off the same way,
and so are the pieces of a concatenation built in place that another op reads (a cyclic
shift that ``rotations.py`` cannot move to the kernel's arguments): fusion cannot tile
them through their inserts.
"""

from __future__ import annotations

from ..._mlir import ir
from ..linalg_queries import linalg_inputs
from ..transform_script import TAG
from .kernels import (VIEWS, Kernel, built_in_place, direct_producers, is_compute, is_contraction, pieces, producers,
                      reads_whole, viewed_op)

PHASE_ATTR = "dnnf.gpu.phase"  # on a phased kernel's top-level scf.forall: the launch it runs in


def _reads(op, ops: list) -> list:
    """(reader, whether through a view) for each input of a compute op among ``ops``
    that reads ``op``'s result (directly or through views)."""
    found = []
    for reader in ops:
        for value in linalg_inputs(reader):
            source = viewed_op(value)
            if reader != op and source is not None and source == op:
                found.append((reader, value.owner.name in VIEWS))
    return found


def phase_boundaries(function) -> list:
    """The ops of a kernel function whose results a phased kernel computes before their
    readers: those another op reads through a view that ``prepare`` could not fold
    into its map (a collapse of several dims read through a map the reshape
    propagation cannot expand, ``collapsed_reads``: that needs div/mod maps, which
    tiling handles only when the tiles line up) and, in
    program order, each op computed from a contraction (not past an earlier such op)
    that another op reads only in part (through a map that is not the whole result);
    and the pieces of a concatenation built in place that another op reads (fusion
    cannot tile the pieces through their inserts)."""
    ops = [op.operation for op in function.regions[0].blocks[0].operations if is_compute(op.operation)]
    concatenated = {piece for reader in ops for value in linalg_inputs(reader) for piece in built_in_place(value)}
    found = []
    for op in ops:
        if op in concatenated:
            found.append(op)
            continue
        reads = _reads(op, ops)
        computed_from = producers(op, stop=set(found)) | {op}
        from_contraction = any(is_contraction(source) for source in computed_from if source.name == "linalg.generic")
        if any(viewed for _, viewed in reads) or \
                from_contraction and any(not reads_whole(reader, op) for reader, _ in reads):
            found.append(op)
    return found


def assign_phases(kernel: Kernel):
    """Each group of ``kernel`` in the launch after the latest of those computing a root
    it reads, directly, through views or as a piece of a concatenation (the first launch
    when it reads none)."""
    phase_of = {}
    for group in kernel.groups:  # in program order: a group's sources come before it
        read = set()
        for op in group.ops:
            for producer in direct_producers(op):
                for piece in pieces(producer.results[0]) if producer.results else []:
                    source = piece.owner.operation if isinstance(piece, ir.OpResult) else None
                    if source is not None and source not in group.ops:
                        read.add(source)
        group.phase = 1 + max((phase_of[op] for op in read if op in phase_of), default=-1)
        phase_of[group.root] = group.phase


def phase_tags(kernel: Kernel) -> dict:
    """The phase of each group of ``kernel`` (``assign_phases``), by the tag of its root
    (``schedule.schedule_blocks`` put them: the root is replaced by its tiled copy)."""
    assign_phases(kernel)
    return {ir.StringAttr(group.root.attributes[TAG]).value: group.phase for group in kernel.groups}


def mark_phases(function, phases: dict):
    """Put ``PHASE_ATTR`` on the top-level loop of the scheduled ``function`` holding each
    op tagged in ``phases`` (``phase_tags``): its group's phase."""

    def visit(op):
        phase = phases.get(ir.StringAttr(op.attributes[TAG]).value) if TAG in op.attributes else None
        if phase is None:
            return ir.WalkResult.ADVANCE
        loop = op
        while loop.parent is not None and loop.parent.name != "func.func":
            loop = loop.parent
        if loop.name == "scf.forall":
            loop.attributes[PHASE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), phase)
        return ir.WalkResult.ADVANCE

    function.walk(visit)


def _phase(op) -> int | None:
    """The phase ``mark_phases`` put on ``op`` (None: not a group's loop)."""
    return ir.IntegerAttr(op.attributes[PHASE_ATTR]).value if PHASE_ATTR in op.attributes else None


def _top_level_needs(op, block_ops: list) -> set:
    """The ops of ``block_ops`` whose results ``op`` (or an op nested in it) uses."""
    found = set()

    def visit(inner):
        for value in inner.operands:
            if isinstance(value, ir.OpResult) and value.owner.operation in block_ops:
                found.add(value.owner.operation)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def group_loops_by_phase(function) -> int:
    """Move each top-level loop marked by ``mark_phases`` (with the ops after it needs:
    its inits, views) to right after the previous loop of its phase, past loops of later
    phases, which it cannot read (a group reads only earlier phases' results): the
    launches of a phase then stand together, merged into one (``mapping.py``). A loop
    that needs a later phase's loop stays. Returns how many loops moved."""
    block = function.regions[0].blocks[0]
    moved = 0
    for loop in [op.operation for op in block.operations if _phase(op.operation) is not None]:
        order = [op.operation for op in block.operations]
        position = order.index(loop)
        previous = [op for op in order[:position] if _phase(op) is not None]
        same = [op for op in previous if _phase(op) == _phase(loop)]
        if not same or same[-1] == previous[-1]:
            continue
        after = order[order.index(same[-1]) + 1: position]
        needed, work = set(), [loop]
        while work:
            for need in _top_level_needs(work.pop(), after) - needed:
                needed.add(need)
                work.append(need)
        if any(op.name == "scf.forall" for op in needed):
            continue
        anchor = same[-1]
        for op in [op for op in after if op in needed] + [loop]:
            op.move_after(anchor)
            anchor = op
        moved += 1
    return moved


__all__ = ["PHASE_ATTR", "assign_phases", "group_loops_by_phase", "mark_phases", "phase_boundaries", "phase_tags"]
