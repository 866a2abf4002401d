"""dnnf-bench's interleaved rounds (``tools/bench_runs.py``): every runner timed once per
round in a rotating order, and the median of the per-round ratios, which a change of
the machine's speed between rounds does not skew as the ratio of the two medians is."""

from types import SimpleNamespace

import pytest

from dnnf_mlir.tools.bench_runs import median_round_ratio, medians, timed_rounds


def test_rounds_rotate_and_time_the_second_run():
    calls = []
    runners = {name: (lambda n: lambda: calls.append(n))(name) for name in "abc"}
    times, rounds = timed_rounds(runners, SimpleNamespace(min_runs=4, max_runs=4, seconds=0))
    assert rounds == 4
    assert {name: len(values) for name, values in times.items()} == {"a": 4, "b": 4, "c": 4}
    assert all(t >= 0 for values in times.values() for t in values)
    # Each runner twice in a row (an untimed run, then the timed one), the order rotating.
    firsts = [calls[6 * r] for r in range(4)]
    assert calls[:6] == ["a", "a", "b", "b", "c", "c"] and firsts == ["a", "b", "c", "a"]


def test_round_ratio_pairs_the_runs_of_a_round():
    # The machine slows down by 2x for the last rounds; dnnf runs as fast as its peer
    # in every round. Ranked separately, dnnf's median comes from a fast round and the
    # peer's from a slow one: the ratio of the medians says 0.5, the rounds say 1.
    dnnf = [10.0, 10.0, 10.0, 20.0, 20.0]
    peer = [10.0, 10.0, 20.0, 20.0, 20.0]
    median = medians({"dnnf": dnnf, "peer": peer})
    assert median["dnnf"] / median["peer"] == pytest.approx(0.5)
    assert median_round_ratio(dnnf, peer) == pytest.approx(1.0)
    assert median_round_ratio([12.0, 30.0, 11.0], [10.0, 20.0, 10.0]) == pytest.approx(1.2)
