"""How many threads a compiled library's run uses: the C its glue adds around the
generated code when that code runs OpenMP (``cpu_glue.py``).

``dnnf_set_num_threads`` (or libomp's default, ``OMP_NUM_THREADS``) gives the most
threads a run may use; each run takes fewer where other processes keep CPUs busy, so
that no parallel region waits for a worker whose CPU another process holds (the cliff
``codegen/cpu/openmp.py``'s docstring measures). The run counts the threads running on
the machine from ``/proc/loadavg`` (one small read, a few microseconds), less itself
and the workers of its previous run that may still spin (a run that starts within
libomp's blocktime of the previous one's end), and sets that team with dynamic teams
off. Measured on a 2-vCPU Zen 4 VM, SqueezeNet on 2 threads, 300 calls, medians (90th
percentiles): back to back 3.50-4.18 ms (3.64-4.76), with libomp's dynamic teams
4.28-4.60 (6.96-8.52); 3 ms between calls 3.68-3.93 (4.06-4.50), with libomp's
3.75-4.98 (4.50-6.71); with a busy loop pinned to the second vCPU 6.3-7.0 ms, as
libomp's 6.1-6.8 (one thread's time: no cliff).

Not libomp's dynamic teams (``omp_set_dynamic(1)``, which the JIT still uses): libomp
sizes a team as ``CPUs - running + ours``, ``running`` a count of the machine's running
threads it takes from ``/proc`` at most once a second, ``ours`` the calling thread plus
the workers awake now. A count taken while our worker spun includes it, so a run that
starts after the worker fell asleep (any pause over the blocktime between runs, as an
application's frames or dnnf-bench's onnxruntime runs make) gets ``2 - 2 + 1 = 1``
thread, and the worker stays asleep until the count is retaken, up to a second later.
Counted by an OMPT tool with ``/proc`` filtered to this process, SqueezeNet on 2
threads ran 60 of its 70 regions on two threads back to back and 25 with 3 ms between
runs. Waking the workers at each run instead (a region on a fixed team) made that 70
and 70, but with another process on the second vCPU each run then waited for the woken
worker to get a CPU: a 0.3 ms matmul took 12-37 ms (0.3-0.4 ms with dynamic teams).
"""

from __future__ import annotations

from ..codegen.cpu.openmp import BLOCKTIME_MS

INCLUDES = ("sched.h",)

DEFINITIONS = (
    "extern void omp_set_num_threads(int);",
    "extern int omp_get_max_threads(void);",
    "extern void omp_set_dynamic(int);",
    "",
    "/* Team sizing (compiler/team_sizing.py). */",
    "static int requested_threads; /* the most threads a run uses */",
    "static int available_cpus; /* the CPUs this process may run on */",
    "static _Thread_local double last_run_end; /* this thread's previous run: when it ended, its team */",
    "static _Thread_local int last_team;",
    "",
    "/* The threads asked for: dnnf_set_num_threads's, else libomp's default (OMP_NUM_THREADS). */",
    "static int asked_threads(void) {",
    "  if (!requested_threads) requested_threads = omp_get_max_threads();",
    "  return requested_threads;",
    "}",
    "",
    "static void init_team_sizing(void) { /* at load, before any run sets a team */",
    "  int asked = asked_threads();",
    "  cpu_set_t cpus;",
    "  available_cpus = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : asked;",
    "}",
    "",
    "/* The threads running on the machine now, the caller included: /proc/loadavg's",
    "   fourth field is \"running/total\". -1 where it cannot be read. */",
    "static int running_threads(void) {",
    "  char text[128];",
    "  int fd = open(\"/proc/loadavg\", O_RDONLY);",
    "  if (fd < 0) return -1;",
    "  ssize_t n = read(fd, text, sizeof text - 1);",
    "  close(fd);",
    "  if (n <= 0) return -1;",
    "  text[n] = 0;",
    "  char *slash = strchr(text, '/');",
    "  if (!slash) return -1;",
    "  char *running = slash;",
    "  while (running > text && running[-1] != ' ') --running;",
    "  return atoi(running);",
    "}",
    "",
    "static int team_for_run(double start) {",
    "  int running = running_threads();",
    "  int asked = asked_threads();",
    "  if (running < 0) return asked;",
    f"  int spinning = start - last_run_end < {BLOCKTIME_MS / 1000:g} ? last_team - 1 : 0;",
    "  int others = running - 1 - spinning;",
    "  int team = available_cpus - (others > 0 ? others : 0);",
    "  return team < 1 ? 1 : team > asked ? asked : team;",
    "}",
    "",
)

LOAD = ("  init_team_sizing();",)


def run_on_team(call: str) -> tuple:
    """C lines that run the generated code's ``call`` on the team sized for this run."""
    return (
        "  double start = monotonic_seconds();",
        "  int team = team_for_run(start);",
        "  omp_set_dynamic(0);",
        "  omp_set_num_threads(team);",
        f"  {call}",
        "  last_run_end = monotonic_seconds();",
        "  last_team = team;",
    )


SET_NUM_THREADS = (
    "int dnnf_set_num_threads(int threads) {",
    "  if (threads > 0) requested_threads = threads;",
    "  return asked_threads();",
    "}",
)

__all__ = ["DEFINITIONS", "INCLUDES", "LOAD", "SET_NUM_THREADS", "run_on_team"]
