"""Linalg on tensors -> kernels on a GPU and their dispatch plan (the GPU backend's steps).

``schedule_module`` tags and schedules every kernel function (``schedule.py``),
``bufferize_module`` makes them work on buffers, ``map_to_hardware`` (``mapping.py``)
makes each one launch, and ``device_kernels`` (``device.py``) takes the launches out
for an API's compiler.
"""

from __future__ import annotations

import math

from ..._mlir import ir
from ...kernel_functions import is_kernel
from ...lowering import read_pipeline
from ..bufferization import copies_to_linalg, results_in_place
from ..lowered_module import functions, symbol_name
from ..passes import apply_script, run_passes, run_pipeline
from ..transform_script import Script
from ..errors import CodegenError
from .kernels import FALLBACK_ATTR, SCHEDULE_ATTR, WORKGROUP_SIZE_ATTR, KernelError, analyze, one_op_per_group
from .schedule import fold_unit_dims, mark_vectorizable, schedule_kernel, vectorize




def _schedule_alone(function, fused: bool, index: int):
    """Schedule a copy of the kernel function ``function`` in a module of its own, then
    put the copy in its place: (its ``OpSchedule``s, the script); a ``CodegenError``
    when the schedule does not apply (``function`` is then as it was)."""
    scratch = ir.Module.create()
    copy = function.operation.clone()
    scratch.body.append(copy)
    kernel = analyze(copy)
    if not fused:
        kernel = one_op_per_group(kernel)
    s = Script()
    planned = schedule_kernel(s, kernel, f"g{index}_")
    fold_unit_dims(s)
    apply_script(scratch, s.text(), "__dnnf_codegen", f"the GPU schedule of {kernel.name}")
    _check_all_in_loops(copy, kernel.name)
    copy.move_before(function.operation)  # out of the scratch module, which dies here
    function.operation.erase()
    return copy, planned, s.text()


# What a scheduled kernel function may hold outside its loops over workgroups.
OUTSIDE_LOOPS = ("scf.forall", "tensor.empty", "tensor.extract_slice", "tensor.insert_slice", "tensor.expand_shape",
                 "tensor.collapse_shape", "arith.constant", "ub.poison", "func.return")


def _check_all_in_loops(function, name: str):
    """All the work of a scheduled kernel function must be in its loops over
    workgroups: what is left outside would run on the host side of the launch."""
    for op in function.regions[0].blocks[0].operations:
        if op.operation.name not in OUTSIDE_LOOPS:
            raise CodegenError(f"the GPU schedule of {name} leaves {op.operation.name} ({op.operation.location}) "
                               "outside its loops")


def schedule_module(module: ir.Module) -> tuple:
    """Schedule every kernel function of ``module``, each on its own: its ops fused into
    one dispatch when the schedule applies, else each op a dispatch of its own (the
    function is marked ``SCHEDULE_ATTR`` = "per-op", and why, ``FALLBACK_ATTR``).
    Returns (the transform scripts, the ``OpSchedule``s). Each function records its
    workgroup size (``WORKGROUP_SIZE_ATTR``)."""
    scripts, schedules = [], []
    kernels = [f for f in functions(module) if is_kernel(f.operation)]
    i64 = ir.IntegerType.get_signless(64)
    for index, function in enumerate(kernels):
        try:
            copy, planned, text = _schedule_alone(function, True, index)
            mode = "fused"
        except (CodegenError, KernelError) as error:
            copy, planned, text = _schedule_alone(function, False, index)
            mode = "per-op"
            copy.attributes[FALLBACK_ATTR] = ir.StringAttr.get(str(error).splitlines()[0][:500])
        copy.attributes[SCHEDULE_ATTR] = ir.StringAttr.get(mode)
        copy.attributes[WORKGROUP_SIZE_ATTR] = ir.IntegerAttr.get(
            i64, max(math.prod(p.details["threads"]) for p in planned))
        scripts.append(text)
        schedules += planned
    mark_vectorizable(module)
    vectorization = Script()
    vectorize(vectorization)
    apply_script(module, vectorization.text(), "__dnnf_codegen", "GPU vectorization")
    run_passes("canonicalize,cse", module)
    return "".join(scripts) + vectorization.text(), schedules


def bufferize_module(module: ir.Module):
    """Tensors -> buffers; results written in place; the copies left (a thread's tile
    copied out) become linalg copies, which the device code turns into loops."""
    run_pipeline(read_pipeline("gpu/bufferize.pipeline"), module)
    results_in_place(module)
    copies_to_linalg(module)
    run_passes("canonicalize,cse", module)


def workgroup_sizes(module: ir.Module) -> dict:
    return {symbol_name(f): ir.IntegerAttr(f.attributes[WORKGROUP_SIZE_ATTR]).value
            for f in functions(module) if WORKGROUP_SIZE_ATTR in f.attributes}


__all__ = ["bufferize_module", "schedule_module", "workgroup_sizes"]
