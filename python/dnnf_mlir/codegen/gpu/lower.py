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
from .kernels import analyze
from .schedule import fold_unit_dims, mark_vectorizable, schedule_kernel, vectorize

WORKGROUP_SIZE_ATTR = "dnnf.gpu.workgroup_size"  # on each kernel function, from its schedule


def schedule_module(module: ir.Module) -> tuple:
    """Schedule every kernel function of ``module``: (the transform script, its
    ``OpSchedule``s). Each function records its workgroup size (``WORKGROUP_SIZE_ATTR``)."""
    s = Script()
    schedules = []
    index = 0
    for function in functions(module):
        if not is_kernel(function.operation):
            continue
        kernel = analyze(function)
        planned = schedule_kernel(s, kernel, f"g{index}_")
        size = max(math.prod(p.details["threads"]) for p in planned)
        function.attributes[WORKGROUP_SIZE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), size)
        schedules += planned
        index += 1
    fold_unit_dims(s)
    text = s.text()
    apply_script(module, text, "__dnnf_codegen", "GPU schedule")
    mark_vectorizable(module)
    vectorization = Script()
    vectorize(vectorization)
    apply_script(module, vectorization.text(), "__dnnf_codegen", "GPU vectorization")
    run_passes("canonicalize,cse", module)
    return text + vectorization.text(), schedules


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


__all__ = ["WORKGROUP_SIZE_ATTR", "bufferize_module", "schedule_module", "workgroup_sizes"]
