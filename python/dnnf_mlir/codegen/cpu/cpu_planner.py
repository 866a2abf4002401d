"""The CPU schedules' planner: the generic ``Planner`` (``kernel_plan.py``), and the
accumulators of the micro-kernels hoisted out of their k loops, once for the module."""

from __future__ import annotations

from ..kernel_plan import Planner
from .target import CpuTarget


class CpuPlanner(Planner):
    """The CPU schedules' planner: it also hoists their micro-kernels' accumulators, once."""

    def __init__(self, target: CpuTarget, threads: int):
        super().__init__(target, threads)
        self._cleanup = False

    def cleanup(self):
        """Canonicalize and hoist the accumulators of the micro-kernels emitted so far.

        Deferred to ``finish``: done once over the whole function after every kernel is
        tiled and vectorized (per kernel, the greedy rewrites over the whole function
        made the schedule quadratic in the size of the model).
        """
        self._cleanup = True

    def finish(self):
        """End the script: the cleanup deferred by ``cleanup``, once."""
        if not self._cleanup:
            return
        s = self.script
        funcs = s.match_func()
        s.canonicalize(funcs)
        s.hoist_accumulators("%root")
        s.canonicalize(funcs)


__all__ = ["CpuPlanner"]
