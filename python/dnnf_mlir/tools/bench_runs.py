"""What dnnf-bench's targets share: a model compiled through the compile cache,
runners timed in interleaved rounds, outputs checked against the judged reference."""

import math
import time
from pathlib import Path

import numpy as np

from ..cache import compile_cached, copy_entry
from ..checking import compare
from ..compiler import Artifact, CompileOptions, compile_model
from ..session import ModelSource


def balanced_orders(count: int) -> list:
    """Orders of ``count`` runners in which each runner comes first equally often and
    follows each other runner equally often (a Williams design: rows of a Latin square,
    and their reverses for an odd count). A plain rotation has runner i + 1 follow
    runner i in every round: with 4 runners AlexNet's fusion dnnf vs none at 1 thread
    came out x1.03 listed as dnnf,none and x0.95 as none,dnnf, in runs minutes apart."""
    first, low, high = [0], 1, count - 1
    while low <= high:
        first.append(low)
        low += 1
        if low <= high:
            first.append(high)
            high -= 1
    orders = [[(i + shift) % count for i in first] for shift in range(count)]
    return orders + [order[::-1] for order in orders] if count % 2 and count > 1 else orders


def timed_rounds(runners: dict, args) -> tuple:
    """``(ms of each runner per round, rounds)`` over interleaved rounds. In a round each
    runner runs twice, back to back, and the second run is timed: that run finds its own
    weights and buffers in the caches however big the runner before it was (timed right
    after another, the first runner of a round ran measurably slower: shufflenet's first
    mode by 5-8%, whichever mode it was). The rounds take the orders of
    ``balanced_orders`` in turn."""
    names = list(runners)
    orders = balanced_orders(len(names))
    times = {name: [] for name in names}
    start = time.perf_counter()
    rounds = 0
    while rounds < args.max_runs and (rounds < args.min_runs or time.perf_counter() - start < args.seconds):
        for name in (names[i] for i in orders[rounds % len(orders)]):
            run = runners[name]
            run()
            t0 = time.perf_counter()
            run()
            times[name].append(1e3 * (time.perf_counter() - t0))
        rounds += 1
    return times, rounds


def medians(times: dict) -> dict:
    """The median of each runner's times."""
    return {name: float(np.median(values)) for name, values in times.items()}


def median_rounds(runners: dict, args) -> dict:
    """Median ms of each runner over interleaved rounds (``timed_rounds``)."""
    times, rounds = timed_rounds(runners, args)
    return medians(times) | {"runs": rounds}


def median_round_ratio(times: list, peer_times: list) -> float:
    """The median over rounds of ``times[i] / peer_times[i]``. Both runs of a ratio come
    from the same round, hence the same phase of a VM whose speed changes for seconds at
    a time; the ratio of the two medians can take one side's median from a slow phase
    and the other's from a fast one (2 threads on a 2-vCPU Zen 4: SqueezeNet 1.03 then
    1.39 in two runs minutes apart)."""
    return float(np.median(np.asarray(times) / np.asarray(peer_times)))


def compile_mode(path: Path, source: ModelSource, options: CompileOptions, outdir: Path, args):
    """``(artifact, loaded library, compiled)`` of ``path`` compiled with ``options``:
    through the compile cache unless --no-cache (or the model's shapes are not all
    fixed); with --keep, also copied to ``outdir``."""
    threads = options.threads
    shapes = source.info.static_shapes({})
    if args.no_cache or shapes is None:
        compile_model(path, outdir, options=options)
        artifact = Artifact(outdir)
        return artifact, artifact.session(threads), True

    def load(directory: Path):
        if args.keep:
            copy_entry(directory, outdir)
        artifact = Artifact(directory)
        return artifact, artifact.session(threads)

    (artifact, library), compiled = compile_cached(path, source.digest, shapes, options, source.cache, load, source.name)
    return artifact, library, compiled


def geomean(values) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def check_outputs(outputs: list, judged) -> dict:
    """The worst of ``outputs`` against the judged reference (``float64_reference``):
    its error over the tolerance, how the tolerance was derived, degenerate references."""
    checks = [compare(g, w, noise=n) for g, w, n in zip(outputs, judged.outputs, judged.noises)]
    worst = max(checks, key=lambda c: c.ratio)
    return {"error_ratio": worst.ratio,
            "tolerance": worst.derivation() + (f" ({judged.note})" if judged.note else ""),
            "degenerate": sorted({c.degenerate for c in checks if c.degenerate})}


__all__ = ["balanced_orders", "check_outputs", "compile_mode", "geomean", "median_round_ratio", "median_rounds", "medians", "timed_rounds"]
