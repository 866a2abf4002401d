"""dnnf-bench's interleaved rounds (``tools/bench_runs.py``): every runner timed once per
round in carry-over balanced orders, and the median of the per-round ratios, which a change of
the machine's speed between rounds does not skew as the ratio of the two medians is;
and the summary over models (``tools/bench.py``), whose worst per-round speed-up over
fusion none is the verdict on "fusion never loses"."""

from collections import Counter
from types import SimpleNamespace

import pytest

from dnnf_mlir.tools.bench import PEERS, summary_of
from dnnf_mlir.tools.bench_runs import balanced_orders, median_round_ratio, medians, timed_rounds


def test_rounds_balance_the_order_and_time_the_second_run():
    calls = []
    runners = {name: (lambda n: lambda: calls.append(n))(name) for name in "abc"}
    times, rounds = timed_rounds(runners, SimpleNamespace(min_runs=7, max_runs=7, seconds=0))
    assert rounds == 7
    assert {name: len(values) for name, values in times.items()} == {"a": 7, "b": 7, "c": 7}
    assert all(t >= 0 for values in times.values() for t in values)
    # Each runner twice in a row (an untimed run, then the timed one), the rounds in
    # balanced_orders' orders, from the first again after the last.
    assert calls[::2] == calls[1::2]
    rounds_run = [calls[6 * r:6 * r + 6:2] for r in range(7)]
    orders = [["abc"[i] for i in order] for order in balanced_orders(3)]
    assert rounds_run == orders + orders[:1]


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6])
def test_balanced_orders_carry_over_evenly(count):
    # Every runner first equally often, and right after each other runner equally
    # often: no runner always runs after the same one (a rotation of 4 runners has
    # runner 1 after runner 0 in every round it is not first).
    orders = balanced_orders(count)
    assert all(sorted(order) == list(range(count)) for order in orders)
    firsts = Counter(order[0] for order in orders)
    follows = Counter((a, b) for order in orders for a, b in zip(order, order[1:]))
    assert set(firsts.values()) == {len(orders) // count} and len(firsts) == count
    assert len(follows) == count * (count - 1) and len(set(follows.values())) == 1


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


def _row(ms: float, none_ms: float, round_speedup: float) -> dict:
    """A bench result's row for one model: dnnf and none, both even with onnxruntime."""
    ratios = {f"{kind}_{peer}": 1.0 for kind in ("ratio", "round_ratio") for peer in PEERS}
    return {"1": {"modes": {
        "dnnf": ratios | {"speedup_over_none": none_ms / ms, "round_speedup_over_none": round_speedup},
        "none": ratios | {"speedup_over_none": 1.0, "round_speedup_over_none": 1.0}}}}


def test_summary_gives_the_worst_speedup_over_none_per_round():
    # One model where fusion wins by 2x, one where it loses 2% per round although the
    # ratio of its medians says it wins: the verdict is the per-round one.
    results = {"a": _row(10.0, 20.0, 2.0), "b": _row(10.0, 10.1, 0.98)}
    summary = summary_of(results, 1, ["dnnf", "none"])["dnnf"]
    assert summary["geomean_round_speedup_over_none"] == pytest.approx((2.0 * 0.98) ** 0.5)
    assert summary["min_round_speedup_over_none"] == pytest.approx(0.98)
    assert summary["min_speedup_over_none"] == pytest.approx(1.01)
    assert summary["max_round_ratio_ort_enable_all"] == pytest.approx(1.0)
    # Without fusion none among the modes there is no speed-up over it.
    assert "geomean_round_speedup_over_none" not in summary_of(results, 1, ["dnnf"])["dnnf"]
