"""The fixed cost of a timed kernel call: the floor under every case's kernel time.

A launch's time is the span between its two timer calls (``compiler/kernel_timer_glue.py``):
two ``clock_gettime`` reads, the call and the kernel's entry and exit. A kernel doing
nothing still takes that span, so no kernel is timed faster than the floor plus the
roofline's time for its work. Measured here as the median timed span of a kernel that
does next to nothing (a Relu of one element: 4 bytes in, 4 out) over many runs; on a
Zen 4 VM it is 30 ns, more than the roofline time of a 3x5x7 matmul (9 ns), so the
sweep judges every case against ``floor + max(FLOPs / peak, bytes / bandwidth)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .one_node import one_node
from .timing import timed_runs

FLOOR_RUNS = 1000  # runs of a few microseconds each: the median is the quiet span


def call_floor_seconds(directory: Path, cpu: "str | None" = None) -> float:
    """The median timed span of a one-element Relu kernel (see the module docstring)."""
    x = np.ones(1, np.float32)
    *_, profile = timed_runs(one_node("Relu", {"x": x}), {"x": x}, directory / "call-floor", FLOOR_RUNS, cpu)
    return float(profile.launch_seconds().sum())


__all__ = ["FLOOR_RUNS", "call_floor_seconds"]
