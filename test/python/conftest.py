"""What every pytest case shares: the CPU the code generator is pinned to, the
process state no test may leave changed, the tools a test needs, the judged models.

``DNNF_CPU`` names the CPU of the host target (``tools/run_tests.sh`` runs the code
generator's tests a second time with another x86 level than this machine's). When
that CPU has features this machine lacks, the run is compile-only: every test
still plans, lowers and compiles its code for that CPU, and a test that then
tries to run the code (``UnsupportedCpuError``, raised instead of executing it)
is reported as skipped with the reason. In any other run that error fails the test.

No test leaves the environment, the working directory or numpy's print options
changed for the tests after it (``unchanged_process_state``: use monkeypatch).

A test that needs a tool tools/setup.sh installs fails without it, never skips: a
broken set-up must not pass. The judged models come as generated (``models``) and as
checks run them (``checked_models``); so do the models outside the judged set
(``extra_models``, ``checked_extra_models``).
"""

import os
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from dnnf_mlir.checking import with_softmax_inputs
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import UnsupportedCpuError
from dnnf_mlir.codegen.cpu.cross import missing_tools

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from gen_extra_models import ensure_extra_models  # noqa: E402
from gen_models import DEFAULT_DIR, ensure_models  # noqa: E402

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


def _run_directory(tmp_path_factory) -> Path:
    """The temporary directory of this test run that all its pytest workers share."""
    basetemp = tmp_path_factory.getbasetemp()
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """What the tests compile through the cache (dnnf-compile, dnnf-bench, sessions) goes
    to a cache of the test run's own, never the user's: one per pytest worker, in the
    directory the workers share, so that the workers share the float64 references of
    dnnf-run --check too (kept beside the cache, ``tools/float64_reference.py``): a large
    CNN's takes the interpreter tens of seconds, and three tests check VGG-19 on its inputs."""
    cache = _run_directory(tmp_path_factory) / f"compile-cache-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    cache.mkdir()
    os.environ["DNNF_CACHE_DIR"] = str(cache)


@pytest.fixture(scope="session")
def shared_compile_cache(tmp_path_factory) -> Path:
    """A compile cache (for ``DNNF_CACHE_DIR``) that every pytest worker of this run
    shares, empty at its start: tests that compile a judged model with the same options
    compile it once per run, the worker that comes second waiting on the cache's lock
    for the first (test_models and test_planted_errors: DenseNet-121)."""
    cache = _run_directory(tmp_path_factory) / "shared-compile-cache"
    cache.mkdir(exist_ok=True)
    return cache


@pytest.fixture(autouse=True)
def unchanged_process_state():
    """Fails a test that leaves os.environ, the working directory or numpy's print options
    changed (monkeypatch's changes are undone before this runs)."""
    environ, cwd, printoptions = dict(os.environ), os.getcwd(), np.get_printoptions()
    yield
    changed = sorted(k for k in environ.keys() | os.environ.keys()
                     if environ.get(k) != os.environ.get(k) and k != "PYTEST_CURRENT_TEST")  # pytest's own
    assert not changed, f"the test left environment variables changed: {', '.join(changed)}"
    assert os.getcwd() == cwd, f"the test left the working directory at {os.getcwd()}"
    assert np.get_printoptions() == printoptions, "the test left numpy's print options changed"


@pytest.fixture(scope="session")
def cpu_above_host():
    """A host ``Target`` whose code this machine cannot run (the first of ``CPUS_ABOVE``)."""
    for name in CPUS_ABOVE:
        target = get_target("host", name)
        if target.missing_features():
            return target
    pytest.fail(f"this CPU ({get_target('host', 'native').cpu_name}) has every feature of {', '.join(CPUS_ABOVE)}: "
                "add a CPU above it to CPUS_ABOVE")


@pytest.fixture(scope="session")
def models():
    """name -> path of each judged model (tools/gen_models.py makes them on first use)."""
    return ensure_models(DEFAULT_DIR)


@pytest.fixture(scope="session")
def checked_models(models, tmp_path_factory):
    """name -> path of the judged model that checks compile and run: a model ending in a
    Softmax also outputs its logits (``checking.with_softmax_inputs``), which a check
    compares where the softmax saturates; other models as they are."""
    return _checked(models, tmp_path_factory.mktemp("checked-models"))


@pytest.fixture(scope="session")
def extra_models():
    """name -> path of each model outside the judged set (tools/gen_extra_models.py)."""
    return ensure_extra_models()


@pytest.fixture(scope="session")
def checked_extra_models(extra_models, tmp_path_factory):
    """``checked_models`` for the models outside the judged set."""
    return _checked(extra_models, tmp_path_factory.mktemp("checked-extra-models"))


def _checked(models, directory):
    """name -> the path ``checked_models`` describes, for the models ``models`` maps."""
    cache = {}

    def get(name):
        if name not in cache:
            model = onnx.load(str(models[name]))
            extended = with_softmax_inputs(model)
            cache[name] = models[name]
            if extended is not model:
                cache[name] = directory / f"{name}.onnx"
                onnx.save(extended, str(cache[name]))
        return cache[name]

    return get


@pytest.fixture(scope="session")
def aarch64_toolchain():
    """The AArch64 cross toolchain and qemu-aarch64; a test using it fails when they are missing."""
    missing = missing_tools("aarch64")
    if missing:
        pytest.fail("missing (tools/setup.sh installs them): " + ", ".join(missing))
