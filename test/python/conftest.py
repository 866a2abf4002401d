"""What every pytest case shares: the CPU the code generator is pinned to.

``DNNF_CPU`` names the CPU of the host target (``tools/run_tests.sh`` runs the code
generator's tests a second time with another x86 level than this machine's). When
that CPU has features this machine lacks, the run is compile-only: every test
still plans, lowers and compiles its code for that CPU, and a test that then
tries to run the code (``UnsupportedCpuError``, raised instead of executing it)
is reported as skipped with the reason. In any other run that error fails the test.
"""

import os

import pytest

from dnnf_mlir.codegen import UnsupportedCpuError, get_target

# x86 CPUs, lowest first, each with a run-time-testable feature the one before lacks:
# AVX-512 (Zen 3 lacks it), AVX512-FP16 and AMX (Zen 4 and 5 lack them),
# AVX512-VP2INTERSECT (Intel's Sapphire and Granite Rapids lack it).
CPUS_ABOVE = ("x86-64-v4", "sapphirerapids", "tigerlake")

PINNED = os.environ.get("DNNF_CPU")
COMPILE_ONLY = bool(PINNED) and bool(get_target("host", PINNED).missing_features())


def pytest_report_header(config):
    if not PINNED:
        return "dnnf codegen: host CPU native"
    how = "compile-only: code this machine cannot run is skipped" if COMPILE_ONLY else "runs here"
    return f"dnnf codegen: host CPU pinned to {PINNED} by DNNF_CPU ({how})"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        return (yield)
    except UnsupportedCpuError as error:
        if COMPILE_ONLY:
            pytest.skip(f"compile-only run for DNNF_CPU={PINNED}: {error}")
        raise


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """What the tests compile through the cache (dnnf-compile, dnnf-bench, sessions) goes
    to a cache of the test run's own, never the user's."""
    os.environ["DNNF_CACHE_DIR"] = str(tmp_path_factory.mktemp("compile-cache"))


@pytest.fixture(scope="session")
def cpu_above_host():
    """A host ``Target`` whose code this machine cannot run (the first of ``CPUS_ABOVE``)."""
    for name in CPUS_ABOVE:
        target = get_target("host", name)
        if target.missing_features():
            return target
    pytest.fail(f"this CPU ({get_target('host', 'native').cpu_name}) has every feature of {', '.join(CPUS_ABOVE)}: "
                "add a CPU above it to CPUS_ABOVE")
