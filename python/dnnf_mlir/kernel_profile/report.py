"""A profiled model's kernel times over repeated runs: the table and the Chrome trace.

``profile_runs`` runs a model compiled with ``profile_kernels`` and collects, per run,
its span and each launch's start and end (``HostSession.kernel_times``, on the same
clock as ``time.perf_counter``) into a ``KernelProfile``. Its ``table`` has a row per
launch (the artifact's kernel count), sorted by time: the kernel, its ops and shapes,
the median milliseconds over the runs, the share of the run, GFLOP/s and GB/s from the
compiler's statistics, and the fraction of this machine's ``roofline`` its arithmetic
intensity makes the limit. ``chrome_trace`` is what onnxruntime's profiler writes:
``traceEvents`` of complete events (``ph`` "X", microseconds), one per run and one per
kernel launch, loadable in chrome://tracing or Perfetto.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..roofline import Roofline, limit_name


class ProfileError(Exception):
    """A model that cannot be profiled (compiled without ``profile_kernels``, not run here)."""


def launches_of(artifact) -> list:
    """The kernel launches a profiled artifact records; ``ProfileError`` when it has none."""
    launches = artifact.manifest.get("kernel_launches")
    if not launches:
        raise ProfileError(f"{artifact.path} was compiled without kernel timers: compile it with "
                           "dnnf-compile --profile-kernels (CPU targets) to profile it")
    return launches


@dataclass(frozen=True)
class KernelRow:
    launch: int
    kernel: str
    ops: str
    shapes: str
    seconds: float  # median over the runs
    share: float  # of ``total_seconds``
    gflops: float
    gbs: float
    bound: str  # Roofline.judge's: "compute", "int8" or "memory"
    roofline_fraction: float


class KernelProfile:
    """The kernel launches of a profiled model (``launches_of``) and the runs timed so far."""

    def __init__(self, launches: list, threads: int = 1):
        self.launches, self.threads = launches, threads
        self.runs = []  # (start, end, [launch starts], [launch ends]), perf_counter seconds

    def record(self, start: float, end: float, starts, ends):
        if len(starts) != len(self.launches):
            raise ProfileError(f"{len(starts)} launch times for {len(self.launches)} launches")
        self.runs.append((start, end, list(starts), list(ends)))

    def run_seconds(self) -> float:
        """The median span of a run (the C call, from Python): medians, so that a run
        the scheduler preempted on a shared machine does not count."""
        return float(np.median([end - start for start, end, _, _ in self.runs]))

    def launch_seconds(self) -> np.ndarray:
        """The median seconds of each launch over the runs."""
        return np.median([np.subtract(ends, starts) for _, _, starts, ends in self.runs], axis=0)

    def outside_seconds(self) -> float:
        """The median time of a run outside its kernels: buffers, the glue, the call."""
        gaps = [end - start - np.subtract(ends, starts).sum() for start, end, starts, ends in self.runs]
        return float(np.median(gaps))

    def total_seconds(self) -> float:
        """A run as the medians make it up: every launch's plus the time outside them
        (the median run itself counts a launch preempted in most runs only once)."""
        return float(self.launch_seconds().sum()) + self.outside_seconds()

    def rows(self, roofline: Roofline) -> list:
        if not self.runs:
            raise ProfileError("no run was profiled")
        total = self.total_seconds()
        rows = []
        for index, (launch, seconds) in enumerate(zip(self.launches, self.launch_seconds())):
            flops, nbytes = launch.get("flops", 0), launch.get("bytes", 0)
            bound, fraction = roofline.judge(flops, nbytes, seconds, self.threads,
                                             int8_flops=launch.get("int8_flops", 0))
            rate = 1e-9 / seconds if seconds > 0 else 0.0
            rows.append(KernelRow(index, launch["kernel"], launch.get("ops", ""), launch.get("shapes", ""),
                                  float(seconds), float(seconds / total), flops * rate, nbytes * rate, bound,
                                  fraction))
        return sorted(rows, key=lambda row: -row.seconds)

    def table(self, roofline: Roofline, limit: int | None = None) -> str:
        """The rows (all, or the ``limit`` longest) as text, with a line of totals."""
        rows = self.rows(roofline)
        lines = [f"{'ms':>9} {'share':>6} {'GFLOP/s':>8} {'GB/s':>7} {'roofline':>12}  kernel: ops [shapes]"]
        for row in rows[:limit]:
            bound = limit_name(row.bound, short=True)
            lines.append(f"{1e3 * row.seconds:9.4f} {100 * row.share:5.1f}% {row.gflops:8.2f} {row.gbs:7.2f} "
                         f"{100 * row.roofline_fraction:5.1f}% {bound:<5}  {row.kernel}: {row.ops} [{row.shapes}]")
        if limit is not None and len(rows) > limit:
            lines.append(f"... {len(rows) - limit} more launches")
        kernels, outside = sum(row.seconds for row in rows), self.outside_seconds()
        lines.append(f"{len(rows)} kernel launches {1e3 * kernels:.3f} ms + outside them (buffers, glue, the call) "
                     f"{1e3 * outside:.3f} ms, medians over {len(self.runs)} runs (median run "
                     f"{1e3 * self.run_seconds():.3f} ms); "
                     f"roofline at {self.threads} thread{'s' * (self.threads > 1)}: "
                     f"{roofline.peak_gflops(self.threads):.1f} GFLOP/s, "
                     f"int8 {roofline.int8_peak_gops(self.threads):.1f} GOP/s, "
                     f"{roofline.bandwidth_gbs(self.threads):.1f} GB/s")
        return "\n".join(lines)

    def chrome_trace(self, model: str = "model") -> dict:
        """onnxruntime's profile format: complete events in microseconds since the first run."""
        if not self.runs:
            raise ProfileError("no run was profiled")
        origin = self.runs[0][0]

        def event(name, category, start, end, **args):
            return {"name": name, "cat": category, "ph": "X", "pid": 0, "tid": 0,
                    "ts": round(1e6 * (start - origin), 3), "dur": round(1e6 * (end - start), 3), "args": args}

        events = []
        for number, (start, end, starts, ends) in enumerate(self.runs):
            events.append(event(f"{model}_run", "Session", start, end, run=number))
            for index, (launch, begin, finish) in enumerate(zip(self.launches, starts, ends)):
                events.append(event(launch["kernel"], "Node", begin, finish, launch=index,
                                    op_name=launch.get("ops", ""),
                                    shapes=launch.get("shapes", ""), flops=launch.get("flops", 0),
                                    bytes=launch.get("bytes", 0)))
        return {"traceEvents": events, "displayTimeUnit": "ms"}


def profile_runs(session, arrays, repeat: int, threads: int = 1) -> tuple:
    """(outputs, ``KernelProfile``) of a warm-up run and ``repeat`` profiled runs of a
    ``HostSession`` whose library has kernel timers."""
    profile = KernelProfile(launches_of(session.artifact), threads)
    call = session.bind(arrays)
    call()
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        end = time.perf_counter()
        profile.record(start, end, *session.kernel_times())
    return call.outputs, profile


__all__ = ["KernelProfile", "KernelRow", "ProfileError", "launches_of", "profile_runs"]
