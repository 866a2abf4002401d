"""The kernel timers of a profiled CPU model's C glue (``model.c``, ``model.h``).

``dnnf-instrument-kernels`` makes the generated code call ``dnnf_kernel_enter(i)`` and
``dnnf_kernel_exit(i)`` around launch ``i``; they store ``CLOCK_MONOTONIC`` (the clock of
Python's ``time.perf_counter``, so that both line up) per thread, since ``dnnf_run``
is reentrant and a run's kernels all run on its calling thread (OpenMP workers live
inside a kernel). ``dnnf_kernel_times`` hands the calling thread's last run to the caller.
"""

from __future__ import annotations

from dataclasses import replace

from .c_glue import GlueParts

TIMES_FUNCTION = "dnnf_kernel_times"

HEADER_DECLARATIONS = (
    "/* Profiled build (dnnf-compile --profile-kernels): the start and end (CLOCK_MONOTONIC seconds) of each of",
    "   the DNNF_KERNEL_LAUNCHES kernel launches of the calling thread's last dnnf_run; returns the launch count. */",
    f"int {TIMES_FUNCTION}(double *starts, double *ends, int count);",
)


def with_kernel_timers(parts: GlueParts, launches: int) -> GlueParts:
    """``parts`` (a CPU model's glue) with the timers of ``launches`` kernel launches."""
    timers = (
        f"#define DNNF_KERNEL_LAUNCHES {launches}",
        "static _Thread_local double launch_starts[DNNF_KERNEL_LAUNCHES], launch_ends[DNNF_KERNEL_LAUNCHES];",
        "",
        "void dnnf_kernel_enter(int32_t launch) { launch_starts[launch] = monotonic_seconds(); }",
        "void dnnf_kernel_exit(int32_t launch) { launch_ends[launch] = monotonic_seconds(); }",
        "",
    )
    reader = (
        "",
        f"int {TIMES_FUNCTION}(double *starts, double *ends, int count) {{",
        "  for (int i = 0; i < count && i < DNNF_KERNEL_LAUNCHES; ++i) {",
        "    starts[i] = launch_starts[i];",
        "    ends[i] = launch_ends[i];",
        "  }",
        "  return DNNF_KERNEL_LAUNCHES;",
        "}",
    )
    return replace(parts, definitions=(*parts.definitions, *timers),
                   extra=(*parts.extra, *reader))


__all__ = ["HEADER_DECLARATIONS", "TIMES_FUNCTION", "with_kernel_timers"]
