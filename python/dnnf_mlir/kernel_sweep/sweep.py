"""``dnnf-bench --kernels``: each op family's kernel against onnxruntime and the roofline.

For each ``one_node.SweepCase``, in this one process: its one-node model is compiled for
the host (one thread, fusion dnnf) with kernel timers (``profile_kernels``), run
beside onnxruntime (ORT_ENABLE_ALL, one thread) in interleaved rounds (``bench_runs.
median_rounds``, as dnnf-bench times models), and its kernels' FLOPs and bytes (the
compiler's statistics) over their measured time give GFLOP/s, GB/s and the fraction of
this machine's roofline (``roofline``: the FMA peak above the ridge intensity, the
triad bandwidth below it), the fixed cost of a timed call added to the time the roofline
allows (``call_floor``: measured once per sweep; a kernel of a few hundred bytes cannot
run faster than it). Outputs are checked as dnnf-bench checks them (against the
model run in float64, the tolerance widened by onnxruntime float32's own error;
integer outputs exactly against onnxruntime). The
table is sorted worst first; a case that does not compile is listed with its error.
Each case's line is printed as it finishes.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from ..checking import compare
from ..codegen import CodegenError
from ..compiler import ArtifactError, CompileError
from ..conversion import ConversionError
from ..frontend.onnx_types import OnnxImportError
from ..roofline import Roofline, limit_name
from ..tools.bench_runs import median_rounds
from ..tools.common import onnxruntime_session
from ..tools.float64_reference import judged_reference
from .call_floor import call_floor_seconds
from .one_node import SweepCase
from .timing import timed_runs

PROFILED_RUNS = 20
FAILURES = (CompileError, CodegenError, ConversionError, ArtifactError, OnnxImportError)


def sweep_case(case: SweepCase, directory: Path, roofline: Roofline, timing, floor: float = 0.0,
               cpu: "str | None" = None) -> dict:
    """Compile (for the host's ``cpu``), time and judge one case (see the module
    docstring); ``timing`` has ``min_runs``, ``max_runs`` and ``seconds`` for the rounds,
    ``floor`` is the fixed cost of a timed call in seconds."""
    model, feeds = case.model()
    artifact, library, inputs, outputs, profile = timed_runs(model, feeds, directory / case.name, PROFILED_RUNS, cpu)
    ort = onnxruntime_session(directory / f"{case.name}.onnx", optimize=True, threads=1)
    fp32 = ort.run(None, feeds)
    error = _error_ratio(outputs, fp32, judged_reference(model, feeds, fp32))
    medians = median_rounds({"dnnf": library.bind(inputs), "ort": lambda: ort.run(None, feeds)}, timing)
    launches = artifact.manifest["kernel_launches"]
    seconds = profile.launch_seconds()
    flops, nbytes = sum(k.get("flops", 0) for k in launches), sum(k.get("bytes", 0) for k in launches)
    int8_flops = sum(k.get("int8_flops", 0) for k in launches)
    busy = seconds.sum()
    bound, fraction = roofline.judge(flops, nbytes, busy, 1, floor * len(launches), int8_flops)
    slowest = launches[int(np.argmax(seconds))]
    return {"family": case.family, "shape": case.shape, "kernels": len(launches), "dnnf_ms": medians["dnnf"],
            "ort_ms": medians["ort"], "ratio": medians["dnnf"] / medians["ort"], "kernel_ms": 1e3 * busy,
            "flops": flops, "int8_flops": int8_flops, "bytes": nbytes, "gflops": flops / busy / 1e9, "gbs": nbytes / busy / 1e9,
            "bound": bound, "roofline_fraction": fraction, "error_ratio": error,
            "slowest_kernel": f"{slowest['kernel']} ({slowest.get('ops', '')})"}


def _error_ratio(outputs, fp32, judged) -> float:
    """The worst output's error over its tolerance: a float one against the float64
    reference (the tolerance widened by onnxruntime float32's own error), an integer
    one (indices, quantized values: the spec computes them in float32, where float64
    rounds some ties the other way) exactly against onnxruntime."""
    ratios = []
    for got, ort, reference, noise in zip(outputs, fp32, judged.outputs, judged.noises):
        floating = np.issubdtype(ort.dtype, np.floating)
        ratios.append(compare(got, reference, noise=noise).ratio if floating else compare(got, ort).ratio)
    return max(ratios)


def _line(name: str, r: dict) -> str:
    if "error" in r:
        return f"{name}: failed: {r['error']}"
    limit = limit_name(r["bound"])
    return (f"{name}: dnnf {r['dnnf_ms']:.3f} ms, onnxruntime {r['ort_ms']:.3f} ms (x{r['ratio']:.2f}); "
            f"{r['kernels']} kernel{'s' * (r['kernels'] > 1)}, {r['gflops']:.2f} GFLOP/s, {r['gbs']:.2f} GB/s: "
            f"{100 * r['roofline_fraction']:.1f}% of the {limit}; error {r['error_ratio']:.2g} of the tolerance")


def run_sweep(cases: list, roofline: Roofline, timing, keep: "Path | None" = None, cpu: "str | None" = None) -> tuple:
    """``(results, floor)``: case name -> result (``sweep_case``'s, or ``{"family",
    "error"}``), each case's line printed (stderr) as it finishes, and the fixed cost of
    a timed call (seconds) the cases were judged with."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="dnnf-kernels-") as scratch:
        root = Path(keep or scratch)
        root.mkdir(parents=True, exist_ok=True)
        floor = call_floor_seconds(root, cpu)
        print(f"call floor: {_floor_words(floor)}", file=sys.stderr, flush=True)
        for number, case in enumerate(cases, 1):
            try:
                results[case.name] = sweep_case(case, root, roofline, timing, floor, cpu)
            except FAILURES as error:
                results[case.name] = {"family": case.family, "shape": case.shape,
                                      "error": str(error).strip().splitlines()[0][:200]}
            print(f"[{number}/{len(cases)}] {_line(case.name, results[case.name])}", file=sys.stderr, flush=True)
    return results, floor


def _floor_words(floor: float) -> str:
    return (f"{1e9 * floor:.0f} ns a timed call (a one-element Relu kernel's median span), added to the time "
            "the roofline allows each launch")


def table(results: dict, roofline: Roofline, floor: float) -> str:
    """One row per case, the lowest roofline fraction first; failures last."""
    header = (f"{'case':<20} {'shape':<40} {'kern':>4} {'dnnf ms':>8} {'ort ms':>8} {'/ort':>5} {'GFLOP/s':>8} "
              f"{'GB/s':>7} {'roofline':>13} {'err/tol':>7}")
    lines = [f"roofline: {roofline.describe()}", f"call floor: {_floor_words(floor)}", header, "-" * len(header)]
    done = sorted((item for item in results.items() if "error" not in item[1]), key=lambda i: i[1]["roofline_fraction"])
    for name, r in done:
        limit = limit_name(r["bound"], short=True)
        lines.append(f"{name:<20} {r['shape'][:40]:<40} {r['kernels']:>4} {r['dnnf_ms']:>8.3f} {r['ort_ms']:>8.3f} "
                     f"{r['ratio']:>5.2f} {r['gflops']:>8.2f} {r['gbs']:>7.2f} {100 * r['roofline_fraction']:>6.1f}% "
                     f"{limit:<5} {r['error_ratio']:>7.2g}")
    lines += [f"{name:<20} failed: {r['error']}" for name, r in results.items() if "error" in r]
    return "\n".join(lines)


def json_document(results: dict, roofline: Roofline, floor: float) -> dict:
    """The sweep as dnnf-bench --kernels --json writes it."""
    return {"roofline": roofline.__dict__, "call_floor_seconds": floor, "cases": results}


__all__ = ["run_sweep", "sweep_case", "table", "json_document"]
