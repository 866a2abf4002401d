"""Reductions of many elements to few results, split over a workgroup's threads.

A kernel's root is tiled over threads along its result's dims, so a reduction to a
scalar (ReduceSum, ReduceMax or a sum of squares over every axis, the sum of a
ReduceMean before its division) ran in a single thread looping over every element, and
a reduction over a long axis with few results ([2, 100000] over axis 1) in a thread per
result. Such a reduction of the group (the root, or a reduction the root reads, then
computed once per workgroup into its shared memory, as a staged op) is split over
``SPLIT_THREADS`` threads instead (``schedule._split_reduction``): each thread reduces
a contiguous part of the reduction into a partial result in shared memory, filled with
the combiner's neutral element, and the partials are then combined onto the
reduction's own init, so a mean still divides by the full count and a maximum still
propagates NaN. The split dim is the outermost reduction dim with an element for every
thread (else the longest), cut into parts of ``ceil(n / threads)``: odd and prime
lengths leave the last threads a shorter part or none.

lavapipe (llvmpipe) also runs a shader's loop for at most 65535 iterations: a thread
looping over 80000 elements of a row returned a wrong sum, silently. Split, a thread's
loop is ``SPLIT_THREADS`` times shorter.
"""

from __future__ import annotations

import math

from ..linalg_queries import parallel_loops
from .kernels import RootGroup, has_reduction, loop_ranges

SPLIT_THREADS = 128  # threads a long reduction is split over (a workgroup's, ``schedule.MAX_THREADS``)
FEW_RESULTS = 16  # the most results a root may have for its reductions to be split
LONG = 4096  # the fewest elements a reduction of one result must reduce to be split


def split_dim(op, threads: int) -> int | None:
    """The reduction loop of ``op`` to split over ``threads``: the outermost with at least
    as many iterations, else the longest; None when ``op`` reduces fewer than ``LONG``
    elements per result or its loops are not static."""
    ranges = loop_ranges(op)
    if ranges is None:
        return None
    reductions = [d for d, p in enumerate(parallel_loops(op)) if not p]
    if not reductions or math.prod(ranges[d] for d in reductions) < LONG:
        return None
    long_enough = [d for d in reductions if ranges[d] >= threads]
    return long_enough[0] if long_enough else max(reductions, key=lambda d: ranges[d])


def long_reductions(group: RootGroup) -> list:
    """The reductions of ``group`` to split over a workgroup's threads (see the module
    docstring), in program order: none unless the root has at most ``FEW_RESULTS``
    results."""
    if math.prod(group.shape) > FEW_RESULTS:
        return []
    return [op for op in group.ops if has_reduction(op) and split_dim(op, SPLIT_THREADS) is not None]


__all__ = ["FEW_RESULTS", "SPLIT_THREADS", "long_reductions", "split_dim"]
