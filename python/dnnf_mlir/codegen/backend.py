"""The backend interface: how a code generator lowers linalg on tensors for its targets.

A backend compiles for one kind of ``Target`` (``target.py``) in five steps, which
``pipeline.lower`` runs in order and the step passes (``step_passes.py``) one at a time:

1. ``prepare``: rewrites into the shapes its kernels take;
2. ``schedule``: the kernel plan (how each linalg op is tiled, fused and vectorized,
   ``kernel_plan.py``), written as a transform script and applied;
3. ``bufferize``: tensors become buffers, results written in place into the caller's;
4. ``map_to_hardware``: the plan's loops and vectors onto the machine (CPU: vectors
   lowered to what LLVM takes, parallel loops to OpenMP threads);
5. ``emit``: the module in the dialect the target's tools take (CPU: LLVM).

Each step works from the IR alone: what a later step needs of an earlier one is on the
module (tags, attributes), never in a Python object. The backend divides its steps
into its own ``stages``, the progress events it logs and the points where ``dump``
sees the module (``python -m dnnf_mlir.codegen --stop-after``); ``Stages`` runs them.

A new backend subclasses ``Backend`` in a package of its own under ``codegen/``, with
a ``Target`` subclass, and registers both with ``target.register_backend`` when its
package is imported; ``codegen/__init__`` imports the package.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

from .._mlir import ir
from ..progress import ProgressEvent, report
from .target import Target

STEPS = ("prepare", "schedule", "bufferize", "map_to_hardware", "emit")
logger = logging.getLogger("dnnf_mlir.codegen")


@dataclass
class KernelPlan:
    """What ``schedule`` decided: an ``OpSchedule`` per scheduled op, and the transform
    script that applied them."""

    schedules: list
    script: str


class Stages:
    """A backend's stages as its steps run them: each is logged as it starts (DEBUG: the
    profiling oracle lowers its candidates through here too), and ``dump(stage,
    module)`` sees the module after it."""

    def __init__(self, names: tuple, dump: Optional[Callable[[str, ir.Module], None]] = None):
        self.names = names
        self.dump = dump

    @contextmanager
    def stage(self, name: str, module: ir.Module):
        event = ProgressEvent("lower", "step", f"code generation: {name}", self.names.index(name), len(self.names))
        report(logger, event, logging.DEBUG)
        yield
        if self.dump:
            self.dump(name, module)


class Backend(ABC):
    """The code generator of one kind of target (see the module docstring). Each step
    takes the module, the target, the threads the parallel loops are split for, and
    the ``Stages`` it runs its stages in."""

    kind: ClassVar[str]  # the Target.kind it compiles for
    stages: ClassVar[tuple]  # its stages, in order
    lowering_pass: ClassVar[str]  # the dnnf-opt pass that runs every step, as compile.pipeline names it
    output_formats: ClassVar[dict]  # what ``translate`` makes of a lowered module: name -> description
    # Whether its kernels may hold a loop over time steps around their ops (a recurrence's scf.for);
    # if not, compile.pipeline unrolls the recurrences first (ecg-unroll-recurrence).
    runs_step_loops: ClassVar[bool] = True

    @abstractmethod
    def tools(self) -> list:
        """The paths of the native tools whose version decides its code (the compile cache's key)."""

    @abstractmethod
    def prepare(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
        ...

    @abstractmethod
    def schedule(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> KernelPlan:
        ...

    @abstractmethod
    def bufferize(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
        ...

    @abstractmethod
    def map_to_hardware(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> str:
        """Returns the transform scripts it ran (``python -m dnnf_mlir.codegen --emit=transform``)."""

    @abstractmethod
    def emit(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
        ...

    @abstractmethod
    def translate(self, module: ir.Module, target: Target, output_format: str) -> "str | bytes":
        """A lowered module in one of ``output_formats`` (text, or bytes for a binary)."""


__all__ = ["Backend", "KernelPlan", "STEPS", "Stages"]
