"""The hostile-input campaign's CI budget: every hand-made invalid input, cuts of each
seed model and a fixed-seed sample of random mutations through the dnnf tools, each
run a process of its own (forked by the campaign's fork server, test_forkserver.py;
``python -m dnnf_mlir.hostile N`` runs more). About 50 seconds on two CPUs."""

import random
import signal

import pytest

from dnnf_mlir.hostile import judge, mlir_cases, onnx_cases, run_campaign
from dnnf_mlir.hostile.seeds import SEEDS


def _assert_clean(summary):
    assert summary.outcomes
    assert not summary.findings, "\n" + summary.report()


def test_handmade_inputs_end_in_one_line_errors():
    """Every tool but dnnf-compile on every case; dnnf-compile (which imports as
    dnnf-translate does) on the cases that reach its own stages or allocate."""
    cases = onnx_cases.handmade_cases() + mlir_cases.handmade_cases()
    summary = run_campaign(cases, jobs=2, timeout=60, tools={"dnnf-translate", "dnnf-opt", "dnnf-run"})
    compiled = [c for c in cases if c.name.startswith(("huge", "gather", "external", "truncated", "not-protobuf"))]
    summary.outcomes += run_campaign(compiled, jobs=2, timeout=60, tools={"dnnf-compile"}).outcomes
    _assert_clean(summary)
    must_fail = {c.name for c in cases if c.must_fail}
    assert all(o.verdict == "clean-error" for o in summary.outcomes if o.case in must_fail)
    assert {o.tool for o in summary.outcomes} == {"dnnf-translate", "dnnf-opt", "dnnf-run", "dnnf-compile"}


def test_truncated_models_end_in_one_line_errors():
    cases = [c for make in SEEDS.values() for c in onnx_cases.truncations(make(), 4)]
    _assert_clean(run_campaign(cases, jobs=2, timeout=60, tools={"dnnf-translate", "dnnf-compile"}))


def test_random_mutations_end_cleanly():
    """Valid mutants are accepted, invalid ones rejected; none crashes (dnnf-compile is
    left to the full campaign: a mutant that stays valid takes seconds to compile)."""
    rng = random.Random(15)
    cases = onnx_cases.random_cases(rng, 16) + mlir_cases.random_cases(rng, 16, mlir_cases.seed_modules())
    _assert_clean(run_campaign(cases, jobs=2, timeout=60, tools={"dnnf-translate", "dnnf-opt", "dnnf-run"}))


@pytest.mark.parametrize("returncode, stderr, leftovers, must_fail, verdict", [
    (1, "dnnf-opt: error: bad\n", [], False, "clean-error"),
    (1, "m.mlir:3:5: error: 'ecg.relu' op bad\n", [], True, "clean-error"),
    (0, "", [], False, "accepted"),
    (0, "", [], True, "accepted-invalid"),
    (1, "Traceback (most recent call last):\n  File x\nValueError: y\n", [], False, "traceback"),
    (-signal.SIGSEGV, "", [], False, "crash"),
    (None, "", [], False, "hang"),
    (1, "dnnf-compile: error: bad\n", [".model.abc"], False, "partial-output"),
    (1, "cmake failed:\nlots of output\n", [], False, "unclear-error"),
    (3, "dnnf-run: error: bad\n", [], False, "unclear-error"),
])
def test_judge_tells_findings_from_clean_errors(returncode, stderr, leftovers, must_fail, verdict):
    assert judge(returncode, stderr, leftovers, must_fail)[0] == verdict
