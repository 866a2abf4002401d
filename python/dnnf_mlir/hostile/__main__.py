"""python -m dnnf_mlir.hostile N: the hand-made hostile inputs, truncations of each
seed model, and N random mutations (ONNX and MLIR in equal parts) through the dnnf
tools; prints the counts per tool and every finding; exit status 1 if any."""

import argparse
import json
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path

from . import mlir_cases, onnx_cases
from .campaign import COMMANDS, run_campaign
from .seeds import SEEDS


def cases(count: int, seed: int, truncations: int) -> list:
    """The campaign's inputs, the same for the same arguments."""
    rng = random.Random(seed)
    found = onnx_cases.handmade_cases() + mlir_cases.handmade_cases()
    for name, make in SEEDS.items():
        found += [onnx_cases.Case(f"{name}-{c.name}", c.data, c.suffix, c.must_fail)
                  for c in onnx_cases.truncations(make(), truncations)]
    found += onnx_cases.random_cases(rng, count - count // 2)
    found += mlir_cases.random_cases(rng, count // 2, mlir_cases.seed_modules())
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dnnf_mlir.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("count", type=int, nargs="?", default=100, help="random mutations (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--truncations", type=int, default=8, help="cut points per seed model (default 8)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a run may take before it is a hang")
    parser.add_argument("--tools", default=",".join(COMMANDS), help="comma-separated subset of the tools")
    parser.add_argument("--keep", type=Path, help="copy the inputs of findings into this directory")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    summary = run_campaign(cases(args.count, args.seed, args.truncations), args.jobs, args.timeout,
                           set(args.tools.split(",")), args.keep)
    print(summary.report())
    print(f"{len(summary.outcomes)} runs in {time.perf_counter() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in summary.outcomes], indent=1) + "\n")
    return 1 if summary.findings else 0


if __name__ == "__main__":
    sys.exit(main())
