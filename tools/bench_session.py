#!/usr/bin/env python3
"""How long an InferenceSession takes to be ready: cold (compiled) and warm (from the cache).

    python tools/bench_session.py                      # BERT-base and ResNet-50
    python tools/bench_session.py squeezenet --runs 5

For each judged model, in a fresh cache directory: a new process creates the session
(a cache miss: the model is compiled), then --runs new processes create it again
(hits). Each process reports the time of ``InferenceSession(...)`` alone and of the
whole start (``import dnnf_mlir`` included) and runs the model once; every output must
equal the cold session's. The warm creation must stay under one second.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_models import DEFAULT_DIR, ensure_models  # noqa: E402

WARM_LIMIT_S = 1.0


def measure(model: str, cache_dir: str, outputs: str):
    """In this (fresh) process: create the session, run it once, report the times."""
    start = time.perf_counter()
    import dnnf_mlir
    from dnnf_mlir.ecg import TensorSpec
    from dnnf_mlir.checking import make_inputs

    imported = time.perf_counter()
    session = dnnf_mlir.InferenceSession(model, cache_dir=cache_dir)
    created = time.perf_counter()
    args = session.get_inputs()
    inputs = make_inputs([a.name for a in args], [TensorSpec(a.shape, a.dtype) for a in args])
    np.savez(outputs, *session.run(None, dict(zip([a.name for a in args], inputs))))
    print(json.dumps({"session_s": created - imported, "with_import_s": created - start,
                      "compilations": session.compilations}))


def child(model: Path, cache_dir: Path, outputs: Path) -> dict:
    command = [sys.executable, __file__, "--measure", str(model), str(cache_dir), str(outputs)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench_session: {model.name}: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=["bert_base", "resnet50"], help="judged model names")
    parser.add_argument("--runs", type=int, default=3, help="warm session creations per model")
    parser.add_argument("--measure", nargs=3, metavar=("MODEL", "CACHE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        return measure(*args.measure)
    paths = ensure_models(DEFAULT_DIR, args.models)
    slow = []
    for name in args.models:
        with tempfile.TemporaryDirectory(prefix="dnnf-bench-session-") as scratch:
            scratch = Path(scratch)
            cold = child(paths[name], scratch / "cache", scratch / "cold.npz")
            if cold["compilations"] != 1:
                sys.exit(f"bench_session: {name}: the cold session did not compile")
            want = list(np.load(scratch / "cold.npz").values())
            warm = []
            for run in range(args.runs):
                warm.append(child(paths[name], scratch / "cache", scratch / f"warm{run}.npz"))
                got = list(np.load(scratch / f"warm{run}.npz").values())
                if warm[-1]["compilations"]:
                    sys.exit(f"bench_session: {name}: the warm session compiled again")
                if any(not np.array_equal(g, w) for g, w in zip(got, want)):
                    error = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
                    sys.exit(f"bench_session: {name}: the warm session's outputs differ from the cold one's by {error}")
        best = min(w["session_s"] for w in warm)
        each = ", ".join(f"{w['session_s']:.3f}" for w in warm)
        print(f"{name}: cold compile {cold['session_s']:.1f} s; warm session from the cache "
              f"{best:.3f} s (best of {args.runs}: {each}), "
              f"{min(w['with_import_s'] for w in warm):.3f} s with `import dnnf_mlir`", flush=True)
        if best >= WARM_LIMIT_S:
            slow.append(name)
    if slow:
        sys.exit(f"bench_session: warm session creation over {WARM_LIMIT_S} s for {', '.join(slow)}")


if __name__ == "__main__":
    main()
