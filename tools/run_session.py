#!/usr/bin/env python3
"""Run a model through dnnf_mlir.InferenceSession and check it against onnxruntime.

    python tools/run_session.py model.onnx --threads 1 --profile --repeat 10

The session is made with dnnf-compile's defaults when asked (--threads 1 --profile),
so that it loads what dnnf-compile left in the compile cache. Prints how the session
came to be (compiled or loaded, and how long it took), the median time of --repeat
runs and the error of each output against onnxruntime (graph optimizations off),
element by element as dnnf-run --check measures it (dnnf_mlir.checking); exits 1
when one is out of tolerance.
"""

import argparse
import sys
import time

import numpy as np

import dnnf_mlir
from dnnf_mlir.ecg import TensorSpec
from dnnf_mlir.checking import RTOL, compare, make_inputs
from dnnf_mlir.tools.common import onnxruntime_session


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, help="OpenMP threads (default: the CPUs this process may use)")
    parser.add_argument("--profile", action="store_true", help="fusion decides yellow cells by measuring them")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs")
    parser.add_argument("--rtol", type=float, default=RTOL)
    args = parser.parse_args()

    start = time.perf_counter()
    session = dnnf_mlir.InferenceSession(args.model, threads=args.threads, profile=args.profile)
    how = "compiled" if session.compilations else "loaded from the compile cache"
    print(f"InferenceSession: {how} in {time.perf_counter() - start:.2f} s")
    inputs = session.get_inputs()
    names = [a.name for a in inputs]
    feeds = dict(zip(names, make_inputs(names, [TensorSpec(a.shape, a.dtype) for a in inputs])))
    outputs = session.run(None, feeds)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append(1e3 * (time.perf_counter() - start))
    print(f"ran {len(times)} times: median {np.median(times):.2f} ms")
    failed = False
    for arg, got, want in zip(session.get_outputs(), outputs, onnxruntime_session(args.model).run(None, feeds)):
        result = compare(got, want, rtol=args.rtol)
        failed |= not result.ok
        print(f"{'ok' if result.ok else 'FAIL'} {arg.name} vs onnxruntime: {result}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
