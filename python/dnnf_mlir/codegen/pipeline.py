"""From linalg on tensors to a target's code: ``lower``, the driver of a backend's steps.

``lower(module, target, threads)`` runs the five steps of the target's backend in
order (``backend.STEPS``; each backend logs its own stages as they start and shows
``dump(stage, module)`` the module after each, see ``backend.Stages``), and records
on the module what any backend's result needs for whoever loads it
(``lowered_module.py``):

- before ``prepare``: the signatures of the public functions (bufferization turns their
  results into out-parameters);
- after ``schedule``: the kernels launched per call of the public functions (the calls
  of kernel functions; without kernel functions, the kernels the plan made) and the
  distinct ones;
- before ``emit``: the target's name and options.

A module whose kernels are functions (``ecg-outline-kernels``) is lowered function by
function: every step works within a function, so no two kernels merge.

``run_step`` runs one step with that bookkeeping (``STEP_FUNCTIONS``): what a step
pass does; each works from the IR alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from .._mlir import ir
from ..kernel_functions import kernel_counts
from .backend import STEPS, KernelPlan, Stages
from .errors import CodegenError
from .lowered_module import lowered_kernels, record_kernels, record_signatures, record_target
from .target import Target, get_target

Dump = Callable[[str, ir.Module], None]


@dataclass
class LoweringReport:
    """What ``lower`` did: the schedules it planned (an ``OpSchedule`` per scheduled op),
    the kernels launched per call and the distinct ones, the transform scripts of the
    schedule and of the mapping onto the hardware."""

    target: Target
    threads: int
    schedules: list
    schedule_script: str
    mapping_script: str
    launched: int
    unique: int


def prepare(module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
    record_signatures(module)
    target.backend.prepare(module, target, threads, stages)


def schedule(module: ir.Module, target: Target, threads: int, stages: Stages) -> KernelPlan:
    plan = target.backend.schedule(module, target, threads, stages)
    launched, unique = kernel_counts(module.operation)
    if not unique:
        launched = unique = len(plan.schedules)
    record_kernels(module, launched, unique)
    return plan


def bufferize(module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
    target.backend.bufferize(module, target, threads, stages)


def map_to_hardware(module: ir.Module, target: Target, threads: int, stages: Stages) -> str:
    return target.backend.map_to_hardware(module, target, threads, stages)


def emit(module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
    record_target(module, target)
    target.backend.emit(module, target, threads, stages)


STEP_FUNCTIONS = {"prepare": prepare, "schedule": schedule, "bufferize": bufferize,
                  "map_to_hardware": map_to_hardware, "emit": emit}


def run_step(step: str, module: ir.Module, target: Target, threads: int = 1, dump: Optional[Dump] = None):
    """Run one of ``STEPS`` on ``module`` (what the step returns: see ``Backend``)."""
    with module.context, ir.Location.unknown(module.context):
        return STEP_FUNCTIONS[step](module, target, max(1, int(threads)), Stages(target.backend.stages, dump))


def lower(module: ir.Module, target: "str | Target" = "host", threads: int = 1,
          dump: Optional[Dump] = None) -> LoweringReport:
    """Lower a linalg-on-tensors ``module`` in place for ``target``.

    ``threads`` > 1 distributes the parallel loops over that many threads.
    ``dump(stage, module)`` is called after each of the backend's stages. Returns a
    ``LoweringReport``.
    """
    target = get_target(target)
    threads = max(1, int(threads))
    done = {step: run_step(step, module, target, threads, dump) for step in STEPS}
    with module.context:
        launched, unique = lowered_kernels(module)
    plan = done["schedule"]
    return LoweringReport(target, threads, plan.schedules, plan.script, done["map_to_hardware"], launched, unique)


def lower_for_kind(kind: str, module: ir.Module, target: "str | Target", threads: int = 1,
                   dump: Optional[Dump] = None) -> LoweringReport:
    """``lower`` for a ``target`` of one kind (what a backend's own lowering pass runs)."""
    target = get_target(target)
    if target.kind != kind:
        raise CodegenError(f"{target.describe()} is not a {kind} target: dnnf-lower (codegen.lower) lowers for any "
                           "target")
    return lower(module, target, threads, dump)


__all__ = ["LoweringReport", "STEP_FUNCTIONS", "lower", "lower_for_kind", "run_step"]
