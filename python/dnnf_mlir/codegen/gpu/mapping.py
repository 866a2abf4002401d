"""Kernel functions on buffers -> one ``gpu.launch`` each, outlined into ``gpu.module``s.

``map_to_hardware(module, workgroup_sizes)`` runs, per kernel function:

1. every top-level ``scf.forall`` (a root group's loop over workgroups,
   ``schedule.py``) becomes a ``gpu.launch`` and its nested loop over threads the
   launch's threads (``transform.gpu.map_forall_to_blocks`` /
   ``map_nested_forall_to_threads``), all with the kernel's one workgroup size;
2. a kernel with several groups has its launches merged into one (or, where that
   would bind more buffers than the device allows, into as few as stay within it):
   the grid is the groups' grids laid end to end along x, and each workgroup runs the body of the group
   its id falls in (the condition is the same for all threads of a workgroup, so the
   barriers inside stay in uniform control flow). The groups are independent (each
   writes its own results), so one dispatch computes them all; a kernel scheduled one
   op at a time (``lower.py``'s fallback) keeps its launches, in order, and a phased
   one (``phases.py``) has the launches of each phase merged, the phases in order;
3. buffers allocated inside a launch become arrays in workgroup memory when its
   threads share them (allocated outside the loops over threads: a staged value), in
   each thread's private memory otherwise (a thread's accumulator tile);

(``lower.py`` then outlines the launches, ``lowering/gpu/outline.pipeline``).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_kernel
from ...linalg_builders import delinearize_index, index_constant
from ..errors import CodegenError
from ..linalg_queries import launch_sizes
from ..lowered_module import functions, symbol_name
from ..passes import apply_script, run_passes
from ..transform_script import Script
from .kernels import SCHEDULE_ATTR, WORKGROUP_SIZE_ATTR
from .phases import PHASE_ATTR

GROUP_ATTR = "dnnf.gpu.group"
GROUP_BRANCH_ATTR = "dnnf.gpu.group_branch"  # on the scf.if running one group of a merged launch
PRIVATE = "#spirv.storage_class<Function>"  # a thread's own memory (SPIR-V Function variables)
WORKGROUP = "#spirv.storage_class<Workgroup>"  # a workgroup's shared memory
SHARED_ATTR = "dnnf.gpu.shared"  # on a buffer allocated for a workgroup
VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast")


def _top_level_foralls(function) -> list:
    found = []

    def visit(op):
        if op.name == "scf.forall":
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    function.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _enclose(forall):
    """``forall`` moved into an ``scf.execute_region`` of its own: the op that
    ``map_forall_to_blocks`` turns into a launch must hold exactly one top-level loop
    (canonicalization inlines the region afterwards)."""
    with ir.InsertionPoint(forall), forall.location:
        region = ir.Operation.create("scf.execute_region", regions=1)
        block = region.regions[0].blocks.append()
    with ir.InsertionPoint(block), forall.location:
        terminator = ir.Operation.create("scf.yield")
    forall.move_before(terminator)
    return region


def _merge_launches(launches):
    """One gpu.launch running each of ``launches`` (same workgroup size) on its own range
    of workgroup ids."""
    arith, gpu = _mlir.arith, _mlir.gpu
    sizes = [launch_sizes(launch) for launch in launches]
    counts = [gx * gy * gz for (gx, gy, gz), _ in sizes]
    block = sizes[0][1]
    first = launches[-1]  # every value the bodies use is defined before the last launch
    with ir.InsertionPoint(first), first.location:
        merged = gpu.LaunchOp((index_constant(sum(counts)), index_constant(1), index_constant(1)),
                              tuple(index_constant(b) for b in block))
        body = merged.regions[0].blocks[0]
    args = list(body.arguments)
    workgroup = args[0]
    offset = 0
    with ir.InsertionPoint(body), first.location:
        for launch, ((gx, gy, gz), _), count in zip(launches, sizes, counts):
            inside = arith.cmpi(arith.CmpIPredicate.ult, workgroup, index_constant(offset + count))
            if offset:
                inside = arith.andi(inside, arith.cmpi(arith.CmpIPredicate.uge, workgroup, index_constant(offset)))
            branch = ir.Operation.create("scf.if", operands=[inside], regions=2,
                                         attributes={GROUP_BRANCH_ATTR: ir.UnitAttr.get()})
            then = branch.regions[0].blocks.append()
            branch.regions[1].blocks.append()
            with ir.InsertionPoint(branch.regions[1].blocks[0]):
                ir.Operation.create("scf.yield")
            with ir.InsertionPoint(then):
                local = arith.subi(workgroup, index_constant(offset)) if offset else workgroup
                ids = delinearize_index(local, [gz, gy, gx])[::-1]
                terminator = ir.Operation.create("scf.yield")
            old = launch.regions[0].blocks[0]
            replacements = ids + args[3:6] + [index_constant(g) for g in (gx, gy, gz)] + args[9:12]
            for old_arg, new in zip(old.arguments, replacements):
                old_arg.replace_all_uses_with(new)
            for op in list(old.operations):
                if op.name == "gpu.terminator":
                    continue
                op.move_before(terminator)
            for block_id in walk_ops(branch, {"gpu.block_id"}):
                dimension = "xyz".index(str(block_id.attributes["dimension"])[-2])
                block_id.results[0].replace_all_uses_with(ids[dimension])
                block_id.erase()
            offset += count
        ir.Operation.create("gpu.terminator")
    for launch in launches:
        launch.erase()
    return merged


def _drop_trailing_barrier(block):
    """Erase the ``gpu.barrier`` just before ``block``'s terminator, if any."""
    operations = list(block.operations)
    if len(operations) >= 2 and operations[-2].name == "gpu.barrier":
        operations[-2].erase()


def _drop_trailing_barriers(launch):
    """Erase the barriers that order nothing: the one ending a launch's body, and the one
    ending each group's branch of a merged launch (a workgroup runs one branch, and
    after it touches no memory). PoCL replicates the code after every barrier in a
    conditional for each path: eight such barriers in one of Inception-v2's merged
    concatenation kernels took it 318 s to build."""
    body = launch.regions[0].blocks[0]
    _drop_trailing_barrier(body)
    for op in body.operations:
        if op.name == "scf.if" and GROUP_BRANCH_ATTR in op.attributes:
            _drop_trailing_barrier(op.regions[0].blocks[0])
            del op.attributes[GROUP_BRANCH_ATTR]


def _mark_shared(module: ir.Module):
    """Mark the buffers a workgroup shares (``SHARED_ATTR``): those allocated in a loop
    over workgroups outside its loops over threads (a staged value, ``schedule.py``)."""
    for op in walk_ops(module.operation, {"memref.alloc"}):
        foralls, parent = 0, op.parent
        while parent is not None and parent.name != "func.func":
            foralls += parent.name == "scf.forall"
            parent = parent.parent
        if foralls == 1:
            op.attributes[SHARED_ATTR] = ir.UnitAttr.get()


def buffer_bytes(memref_type: ir.MemRefType) -> int:
    """The bytes of a static buffer (elements of at least a byte)."""
    element = memref_type.element_type
    return math.prod(memref_type.shape) * max(8, element.width if hasattr(element, "width") else 32) // 8


def _place_buffers(module: ir.Module, max_shared_memory: int):
    """Buffers allocated inside a launch: the ones its workgroups share in workgroup
    memory (at most ``max_shared_memory`` bytes a launch), the others arrays in each
    thread's private memory (``memref.alloca``); their views carry the space too."""
    memref = _mlir.memref
    for launch in walk_ops(module.operation, {"gpu.launch"}):
        shared = [op for op in walk_ops(launch, {"memref.alloc"}) if SHARED_ATTR in op.attributes]
        nbytes = sum(buffer_bytes(ir.MemRefType(op.results[0].type)) for op in shared)
        if nbytes > max_shared_memory:
            raise CodegenError(f"kernel {symbol_name(launch.parent)} shares {nbytes} bytes of workgroup memory; the "
                               f"device has {max_shared_memory}")
    for op in walk_ops(module.operation, {"memref.alloc"}):
        parent = op.parent
        while parent is not None and parent.name not in ("gpu.launch", "func.func"):
            parent = parent.parent
        if parent is None or parent.name != "gpu.launch":
            continue
        memref_type = ir.MemRefType(op.results[0].type)
        space = ir.Attribute.parse(WORKGROUP if SHARED_ATTR in op.attributes else PRIVATE)
        placed = ir.MemRefType.get(memref_type.shape, memref_type.element_type, memref_type.layout, space)
        with ir.InsertionPoint(op), op.location:
            alloca = memref.AllocOp(placed, [], []) if SHARED_ATTR in op.attributes else \
                memref.AllocaOp(placed, [], [])
        op.results[0].replace_all_uses_with(alloca.result)
        op.erase()
        work = [alloca.result]
        while work:
            value = work.pop()
            for use in list(value.uses):
                user = use.owner
                if user.name == "memref.dealloc":
                    user.erase()
                elif user.name in VIEWS:
                    view = ir.MemRefType(user.results[0].type)
                    user.results[0].set_type(ir.MemRefType.get(view.shape, view.element_type, view.layout, space))
                    work.append(user.results[0])


def _sink_constants(module: ir.Module):
    """Clone every constant a launch uses into it: outlining would make each a kernel
    argument (``gpu-launch-sink-index-computations`` sinks index constants only)."""
    for launch in walk_ops(module.operation, {"gpu.launch"}):
        body = launch.regions[0].blocks[0]
        clones = {}

        def visit(op, body=body, clones=clones):
            for index, value in enumerate(op.operands):
                owner = value.owner.operation if isinstance(value, ir.OpResult) else None
                if owner is None or owner.name not in ("arith.constant", "ub.poison") or _inside(owner, launch):
                    continue
                if value not in clones:
                    with ir.InsertionPoint.at_block_begin(body):
                        clones[value] = owner.clone().results[0]
                op.operands[index] = clones[value]
            return ir.WalkResult.ADVANCE

        for op in body.operations:
            op.operation.walk(visit)


def _inside(op, ancestor) -> bool:
    parent = op.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


def bound_buffers(launch) -> set:
    """The buffers defined outside ``launch`` that its body uses: its bindings once
    outlined (each view of a buffer one of its own: the slices of a batch norm's
    parameters that the pieces of a concatenation read)."""
    found = set()

    def visit(op):
        for value in op.operands:
            owner = value.owner if isinstance(value, ir.OpResult) else value.owner.owner
            if isinstance(value.type, ir.MemRefType) and owner != launch and not _inside(owner, launch):
                found.add(value)
        return ir.WalkResult.ADVANCE

    for block in launch.regions[0].blocks:
        for op in block.operations:
            op.operation.walk(visit)
    return found


OFFSET_ALIGNMENT = 256  # bytes: the largest minStorageBufferOffsetAlignment Vulkan allows


def _rebase_views(module: ir.Module):
    """A view with an offset that a launch reads (a chunk of a weight too big for one
    binding, ``oversized.py``; the columns of a weight that ``slices.py`` split) becomes
    a buffer of its own to the kernel: a ``memref.reinterpret_cast`` with the view's
    strides (identity layout where they are dense), which the dispatch plan binds at
    the view's offset rounded down to ``OFFSET_ALIGNMENT``, the rest the cast's offset
    (a binding's offset must be a multiple of the device's
    minStorageBufferOffsetAlignment, at most 256 bytes on any device)."""
    memref = _mlir.memref
    for launch in walk_ops(module.operation, {"gpu.launch"}):
        casts = {}

        def visit(op, launch=launch, casts=casts):
            for index, value in enumerate(op.operands):
                owner = value.owner.operation if isinstance(value, ir.OpResult) else None
                if owner is None or owner.name != "memref.subview" or _inside(owner, launch):
                    continue
                view = ir.MemRefType(value.type)
                if value not in casts:
                    with ir.InsertionPoint(launch), launch.location:
                        strides, offset = view.get_strides_and_offset()
                        within = offset % (OFFSET_ALIGNMENT * 8 // max(8, view.element_type.width))
                        dense = [math.prod(view.shape[i + 1:]) for i in range(view.rank)]
                        layout = None if strides == dense and not within else \
                            ir.StridedLayoutAttr.get(within, strides)
                        rebased = ir.MemRefType.get(view.shape, view.element_type, layout)
                        casts[value] = memref.reinterpret_cast(rebased, value, [], [], [], [within],
                                                               list(view.shape), strides)
                op.operands[index] = casts[value]
            return ir.WalkResult.ADVANCE

        for op in launch.regions[0].blocks[0].operations:
            op.operation.walk(visit)
        for cast in casts.values():
            _retype_views(cast)


def _retype_views(value):
    """The subviews of ``value`` (whose layout changed) with their layouts recomputed
    from its strides and offset, and theirs in turn (the offset static where the source's
    and the view's offsets are, as the subview's verifier infers it)."""
    strides, base = ir.MemRefType(value.type).get_strides_and_offset()
    for use in list(value.uses):
        view = use.owner
        if view.name != "memref.subview":
            continue
        old = ir.MemRefType(view.results[0].type)
        sizes = list(ir.DenseI64ArrayAttr(view.attributes["static_sizes"]))
        steps = list(ir.DenseI64ArrayAttr(view.attributes["static_strides"]))
        kept = [s * step for s, step in zip(strides, steps)]
        for dim in [d for d, size in enumerate(sizes) if size == 1][: len(kept) - old.rank]:
            kept[dim] = None  # a unit dim a rank-reducing view drops
        kept = [k for k in kept if k is not None]
        dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
        offsets = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
        offset = dynamic if base == dynamic or dynamic in offsets + strides else \
            base + sum(o * stride for o, stride in zip(offsets, strides))
        layout = ir.StridedLayoutAttr.get(offset, kept)
        view.results[0].set_type(ir.MemRefType.get(old.shape, old.element_type, layout, old.memory_space))
        _retype_views(view.results[0])


def _within_bindings(launches: list, max_bindings: int | None) -> list:
    """``launches`` (independent, in order) in as few runs of consecutive ones as keep
    the buffers each run binds within ``max_bindings`` (None: no limit): the runs merged
    into one launch each. A run of one launch may bind more (``lower.py`` refuses it)."""
    runs, bound = [], set()
    for launch in launches:
        buffers = bound_buffers(launch)
        if runs and (max_bindings is None or len(bound | buffers) <= max_bindings):
            runs[-1].append(launch)
            bound |= buffers
        else:
            runs.append([launch])
            bound = set(buffers)
    return runs


def _independent_runs(function) -> list:
    """The launches of ``function`` in runs of consecutive independent ones, in order: all
    of a fused kernel's; each phase's of a phased one (``PHASE_ATTR``, which the launch
    keeps from its loop); one each otherwise."""
    launches = walk_ops(function.operation, {"gpu.launch"})
    schedule = ir.StringAttr(function.attributes[SCHEDULE_ATTR]).value if SCHEDULE_ATTR in function.attributes \
        else "fused"
    if schedule == "fused":
        return [launches] if launches else []
    runs, last = [], None
    for launch in launches:
        phase = ir.IntegerAttr(launch.attributes[PHASE_ATTR]).value if PHASE_ATTR in launch.attributes else None
        if phase is not None and phase == last:
            runs[-1].append(launch)
        else:
            runs.append([launch])
        last = phase
    return runs


def launch_kernels(module: ir.Module, max_shared_memory: int, max_bindings: int | None = None):
    """Map every kernel function's loops to launches (see the module docstring), each
    with the workgroup size its schedule recorded (``WORKGROUP_SIZE_ATTR``) and at most
    ``max_shared_memory`` bytes of workgroup memory; a kernel's groups merged into as
    few launches as bind at most ``max_bindings`` buffers each (one, unless a device's
    limit on a dispatch's bindings splits them: a concatenation of 16 recurrent steps'
    outputs)."""
    _mark_shared(module)
    workgroup_sizes = {symbol_name(f): ir.IntegerAttr(f.attributes[WORKGROUP_SIZE_ATTR]).value
                       for f in functions(module) if WORKGROUP_SIZE_ATTR in f.attributes}
    s = Script()
    for function in functions(module):
        if not is_kernel(function.operation):
            continue
        name = symbol_name(function)
        for index, forall in enumerate(_top_level_foralls(function)):
            region = _enclose(forall)
            region.attributes[GROUP_ATTR] = ir.StringAttr.get(f"{name}:{index}")
            if PHASE_ATTR in forall.attributes:
                region.attributes[PHASE_ATTR] = forall.attributes[PHASE_ATTR]
            loop = s.fresh("group")
            s.emit(f'{loop} = transform.structured.match ops{{["scf.execute_region"]}} attributes{{{GROUP_ATTR} = "{name}:{index}"}}'
                   " in %root : (!transform.any_op) -> !transform.any_op")
            launch = s.fresh("launch")
            s.emit(f"{launch} = transform.gpu.map_forall_to_blocks {loop} {{generate_gpu_launch}}"
                   " : (!transform.any_op) -> !transform.any_op")
            threads = s.fresh("threads")
            s.emit(f"{threads} = transform.gpu.map_nested_forall_to_threads {launch}"
                   f" block_dims = [{workgroup_sizes[name]}, 1, 1] : (!transform.any_op) -> !transform.any_op")
    apply_script(module, s.text("__dnnf_gpu_map"), "__dnnf_gpu_map", "mapping loops to workgroups and threads")
    for region in walk_ops(module.operation, {"scf.execute_region"}):
        if PHASE_ATTR in region.attributes:
            for launch in walk_ops(region, {"gpu.launch"}):
                launch.attributes[PHASE_ATTR] = region.attributes[PHASE_ATTR]
    run_passes("canonicalize", module)  # inlines the execute_regions
    for function in functions(module):
        launches = []
        for run in _independent_runs(function):
            launches += [_merge_launches(chunk) if len(chunk) > 1 else chunk[0]
                         for chunk in _within_bindings(run, max_bindings)]
        for launch in launches:
            _drop_trailing_barriers(launch)
    _place_buffers(module, max_shared_memory)
    _sink_constants(module)
    _rebase_views(module)


__all__ = ["bound_buffers", "buffer_bytes", "launch_kernels"]
