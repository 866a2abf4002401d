"""Linalg on tensors -> one launch per kernel function (the GPU backend's steps).

``compile_kernels(module)`` compiles every kernel function of ``module`` on its own, in
a module of its own: kernel rewrites (``prepare.prepare_kernel``), schedule
(``schedule.py``), vectorization, bufferization, launches (``mapping.py``). The fused
schedule is tried first (one dispatch). A kernel that gathers from a value it computes
(``GatherError``) or reads part of a value computed from a contraction
(``PartialReadError``) is compiled "phased": that value's group a launch before its
readers' (``phases.py``). When any step fails, or leaves work outside the launch (a copy bufferization
could not write in place), the kernel is compiled again with each op a dispatch of its
own, the values between them in buffers of the kernel function (``SCHEDULE_ATTR``
"per-op"; and why it is not fused, ``FALLBACK_ATTR``). The
compiled function, on buffers, then takes the place of the original; the constants it
reads come with it, renamed after it; it stands beside the original until
``bufferize_host`` makes the entry function work on buffers with the same conventions
(identity layouts, results as out-parameters) and puts it in the original's place.
``outline_launches`` then makes each launch a ``gpu.module``.
"""

from __future__ import annotations

from ..._mlir import MLIRError, ir
from ...ir_walk import walk_ops
from ...kernel_functions import KERNEL_ATTR, is_kernel
from ...lowering import read_pipeline
from ..bufferization import copies_to_linalg, results_in_place
from ..errors import CodegenError
from ..lowered_module import functions, symbol_name
from ..passes import apply_script, run_passes, run_pipeline
from ..transform_script import TAG, Script
from .contraction_steps import mark_stepped, widen_rows
from .deferred_divisions import defer_divisions
from .forwarding import forward_transfers
from .overwrites import rebase_overwrites
from .loop_budget import check_loop_iterations
from .loop_kernels import is_loop_kernel, read_only_arguments, single_invocations
from .kernels import FALLBACK_ATTR, SCHEDULE_ATTR, WORKGROUP_SIZE_ATTR, PhaseError, analyze, one_op_per_group
from .mapping import bound_buffers, launch_kernels
from .partial_reads import drop_bounded_mods
from .partial_reductions import partial_reductions
from .phases import group_loops_by_phase, mark_phases, phase_boundaries, phase_tags
from .prepare import prepare_kernel, prepare_module
from .private_arrays import check_private_arrays
from .schedule import schedule_blocks, schedule_threads, tile_mapped
from .tilings import beyond_grid, divisor
from .unrolling import mark_unrolled_loops
from .vectorization import fold_unit_dims, mark_vectorizable, vectorize

# What a compiled kernel function may do besides its launches: nothing that computes.
HOST_OPS = ("gpu.launch", "func.return", "arith.constant", "ub.poison", "memref.alloc", "memref.dealloc",
            "memref.get_global", "memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.cast",
            "memref.reinterpret_cast")


def _bufferize(module: ir.Module):
    """Tensors -> buffers; results written in place; the copies left (a thread's tile
    copied out) become linalg copies, which the device code turns into loops."""
    run_pipeline(read_pipeline("gpu/bufferize.pipeline"), module)
    results_in_place(module)
    copies_to_linalg(module)
    run_passes("canonicalize,cse", module)


SCHEDULES = ("fused", "phased", "per-op")  # one dispatch; a launch per phase; per op


def _compile_alone(function, schedule: str, index: int, device):
    """Compile a copy of ``function`` in a module of its own for ``device`` (a profile's
    limits) with one of ``SCHEDULES``: (the module, its ``OpSchedule``s, the scripts); a
    ``CodegenError`` or ``KernelError`` when a step fails."""
    scratch = ir.Module.create()
    copy = function.operation.clone()
    scratch.body.append(copy)
    phased = schedule == "phased"
    prepare_kernel(scratch, device, phased)
    if device.attention_tiles:
        defer_divisions(scratch)
    partials = partial_reductions(copy)
    if schedule == "fused" and partials:
        raise PhaseError(f"{symbol_name(function)} reduces in two launches: partial results, then their combination")
    if schedule == "per-op":
        kernel = one_op_per_group(copy)
    else:
        kernel = analyze(copy, phased, phase_boundaries(copy) + partials if phased else ())
    blocks = Script()
    plans = schedule_blocks(blocks, kernel, f"g{index}_", device)
    phases = phase_tags(kernel) if phased else {}
    apply_script(scratch, blocks.text(), "__dnnf_codegen", f"the GPU schedule of {kernel.name} over workgroups")
    if phased:
        mark_phases(copy, phases)
        group_loops_by_phase(copy)
    run_passes("cse", scratch)  # a producer fused once per use: one clone (canonicalize would fold copies away)
    s = Script()
    planned, size = schedule_threads(s, scratch, plans, device.max_shared_memory)
    fold_unit_dims(s)
    apply_script(scratch, s.text(), "__dnnf_codegen", f"the GPU schedule of {kernel.name} over threads")
    drop_bounded_mods(scratch)
    mark_vectorizable(scratch)
    mark_stepped(scratch)
    unrolled = mark_unrolled_loops(scratch, device.matmul_rows)
    vectorization = Script()
    vectorize(vectorization, unrolled)
    apply_script(scratch, vectorization.text(), "__dnnf_codegen", f"vectorizing {kernel.name}")
    widen_rows(scratch)
    run_passes("canonicalize,cse", scratch)
    if forward_transfers(scratch):
        run_passes("canonicalize,cse", scratch)
    if rebase_overwrites(scratch):
        run_passes("canonicalize,cse", scratch)
    _bufferize(scratch)
    if schedule != "fused":
        _copies_in_loops(scratch, copy, size)
    copy.attributes[WORKGROUP_SIZE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), size)
    copy.attributes[SCHEDULE_ATTR] = ir.StringAttr.get(schedule)
    launch_kernels(scratch, device.max_shared_memory, device.max_storage_buffers)
    _check_launches(scratch, copy, kernel.name, device)
    return scratch, planned, blocks.text() + s.text() + vectorization.text()


def _check_launches(scratch: ir.Module, function, name: str, device):
    """Canonicalize the launches of the compiled ``function``; a ``CodegenError`` when work
    is left outside them or a launch binds more buffers, keeps more private arrays per
    thread or runs more loop iterations a thread than ``device`` allows."""
    try:  # here, where a failure falls back, not in the host's bufferization, which canonicalizes it again
        run_passes("canonicalize", scratch)
    except MLIRError as error:
        raise CodegenError(f"canonicalizing the launches of {name} failed: {str(error).splitlines()[1:2]}") from None
    outside = sorted({op.operation.name for op in function.regions[0].blocks[0].operations} - set(HOST_OPS))
    if outside:
        raise CodegenError(f"{name} does work outside its launches: {', '.join(outside)}")
    for launch in walk_ops(function, {"gpu.launch"}):
        bindings = len(bound_buffers(launch))
        if bindings > device.max_storage_buffers:
            raise CodegenError(f"{name} would bind {bindings} buffers in one launch; the device allows "
                               f"{device.max_storage_buffers}")
    check_private_arrays(function, name, device)
    check_loop_iterations(function, name, device)


LOOP_WORKGROUP_SIZE = 64  # threads per workgroup of a loop kernel's copies (its loops use one)


def _compile_loop_kernel(function, device):
    """Compile a copy of the loop kernel ``function`` (``loop_kernels``) in a module of its
    own: bufferized as it is, its copies over workgroups and threads, each loop a
    dispatch of one invocation, in order."""
    scratch = ir.Module.create()
    copy = function.operation.clone()
    scratch.body.append(copy)
    prepare_kernel(scratch, device)
    read_only_arguments(copy)
    _bufferize(scratch)
    _copies_in_loops(scratch, copy, LOOP_WORKGROUP_SIZE)
    single_invocations(copy, LOOP_WORKGROUP_SIZE, HOST_OPS, device.max_loop_iterations)
    copy.attributes[WORKGROUP_SIZE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), LOOP_WORKGROUP_SIZE)
    copy.attributes[SCHEDULE_ATTR] = ir.StringAttr.get("per-op")
    launch_kernels(scratch, device.max_shared_memory)
    _check_launches(scratch, copy, symbol_name(function), device)
    return scratch


def _copies_in_loops(scratch: ir.Module, function, threads: int):
    """Tile the copies bufferization left between a per-op kernel's loops (a value it
    could not compute in place) over workgroups and threads: each becomes one more
    launch, in order."""
    copies = [op for op in function.regions[0].blocks[0].operations if op.operation.name == "linalg.copy"]
    if not copies:
        return
    s = Script()
    for copy in copies:
        shape = list(ir.MemRefType(copy.operation.operands[1].type).shape)
        inner = divisor(shape[-1], threads) if shape else 1
        blocks = [1] * (len(shape) - 1) + [inner]
        looped = beyond_grid([n // b for n, b in zip(shape, blocks)])
        for d in looped:
            blocks[d] = shape[d]
        trips = [n // b for n, b in zip(shape, blocks)]
        handle = s.match(["linalg.copy"], tag=ir.StringAttr(copy.operation.attributes[TAG]).value)
        tiled, _ = tile_mapped(s, handle, blocks, trips, "block")
        tile_mapped(s, tiled, [0 if d in looped else 1 for d in range(len(shape))],
                    [1] * (len(shape) - 1) + [inner], "thread")
    apply_script(scratch, s.text(), "__dnnf_codegen", "copies over threads")


COMPILED_ATTR = "dnnf.gpu.compiled"  # on a kernel function: its compiled version, on buffers
COMPILED_SUFFIX = ".compiled"


def compile_kernels(module: ir.Module, device) -> tuple:
    """Compile every kernel function of ``module`` on its own for ``device`` (see the
    module docstring; a device profile: no buffer bound to a kernel over its binding
    range, shared memory within its own) and put the
    compiled function, on buffers and launching its kernels, beside it (``COMPILED_ATTR``
    names it) with the constants it reads: (the transform scripts, the ``OpSchedule``s)."""
    scripts, schedules = [], []
    for index, function in enumerate([f for f in functions(module) if is_kernel(f.operation)]):
        if is_loop_kernel(function):
            _put_beside(_compile_loop_kernel(function, device), function)
            continue
        try:
            scratch, planned, text = _compile_alone(function, "fused", index, device)
        except CodegenError as error:
            for schedule in ("phased", "per-op") if isinstance(error, PhaseError) else ("per-op",):
                try:
                    scratch, planned, text = _compile_alone(function, schedule, index, device)
                    break
                except CodegenError as fallback:
                    failure = fallback
            else:
                raise CodegenError(f"kernel {symbol_name(function)}: neither its fused schedule nor one dispatch per "
                                   f"op applies ({str(error).splitlines()[0]}; {str(failure).splitlines()[0]})") from None
            why = str(error).splitlines()[0][:500]
            next(op.operation for op in scratch.body.operations
                 if op.operation.name == "func.func").attributes[FALLBACK_ATTR] = ir.StringAttr.get(why)
        _put_beside(scratch, function)
        scripts.append(text)
        schedules += planned
    return "".join(scripts), schedules


def _put_beside(scratch: ir.Module, function):
    """Move ``scratch``'s compiled kernel function before ``function``, named after it
    with ``COMPILED_SUFFIX``, with the constants it reads (renamed after it: another
    kernel may have its own of the name)."""
    name = symbol_name(function)
    compiled = next(op.operation for op in scratch.body.operations if op.operation.name == "func.func")
    renamed = {}
    for op in [op.operation for op in scratch.body.operations if op.operation.name == "memref.global"]:
        old = ir.StringAttr(op.attributes["sym_name"]).value
        renamed[old] = f"{name}{old}"
        op.attributes["sym_name"] = ir.StringAttr.get(renamed[old])
        op.move_before(function.operation)
    for get in walk_ops(compiled, {"memref.get_global"}):
        get.attributes["name"] = ir.FlatSymbolRefAttr.get(renamed[ir.FlatSymbolRefAttr(get.attributes["name"]).value])
    compiled.attributes["sym_name"] = ir.StringAttr.get(name + COMPILED_SUFFIX)
    del compiled.attributes[KERNEL_ATTR]  # a kernel function again in its original's place
    compiled.move_before(function.operation)
    function.attributes[COMPILED_ATTR] = ir.FlatSymbolRefAttr.get(name + COMPILED_SUFFIX)


def bufferize_host(module: ir.Module):
    """Bufferize the public functions with the conventions the kernels were compiled
    with, then put each compiled kernel function in place of its original (whose body
    was bufferized on the way)."""
    _bufferize(module)
    by_name = {symbol_name(f): f for f in functions(module)}
    for function in [f for f in functions(module) if COMPILED_ATTR in f.attributes]:
        compiled = by_name[ir.FlatSymbolRefAttr(function.attributes[COMPILED_ATTR]).value]
        compiled.attributes["sym_name"] = function.attributes["sym_name"]
        compiled.attributes[KERNEL_ATTR] = ir.UnitAttr.get()
        function.operation.erase()


def outline_launches(module: ir.Module):
    """Every launch into a ``gpu.module`` of its own (``lowering/gpu/outline.pipeline``)."""
    run_pipeline(read_pipeline("gpu/outline.pipeline"), module)


__all__ = ["COMPILED_ATTR", "bufferize_host", "compile_kernels", "outline_launches"]
