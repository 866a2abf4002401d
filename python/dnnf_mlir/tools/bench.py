"""dnnf-bench: compiled dnnf-mlir code against onnxruntime, model by model.

    dnnf-bench resnet50.onnx bert_base.onnx --threads 1,2 --json bench.json

For each model and thread count, in this one process: compile for the host with
that many threads (the compile time and kernel count are reported), load the
library, open onnxruntime sessions with graph optimizations off (ORT_DISABLE_ALL:
one kernel per ONNX node, like the unfused dnnf code) and on (ORT_ENABLE_ALL),
warm all three up, then time them in interleaved rounds -- one run of each per
round, so that a change in machine load hits all three alike -- and report
medians and the ratios dnnf / onnxruntime (below 1: dnnf is faster). The first
outputs are compared with ORT_DISABLE_ALL's.

Each model is compiled after the ecg-rewrite pass (--no-rewrite: without it); the
table shows its ops and GFLOP before>after rewriting, the JSON the pass's report
("rewrite": ops and FLOPs before and after, rules applied, seconds). The kernels
are those launched per run, each a function of its own (ecg-outline-kernels; the
JSON has the distinct ones too); --no-outline compiles with the kernel boundaries
the code generator draws by itself, the pipeline before kernel functions.
"""

import argparse
import json
import math
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from ..codegen import CodegenError, get_target
from ..compiler import Artifact, ArtifactError, CompileError, compile_model
from ..conversion import ConversionError
from ..ecg import TensorSpec
from ..statistics import change
from .common import ToolError, errors, make_inputs, onnxruntime_session, run_tool

PEERS = ("ort_disable_all", "ort_enable_all")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dnnf-bench", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("models", nargs="+", metavar="MODEL", help="ONNX models")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each before timing")
    parser.add_argument("--min-runs", type=int, default=10, help="timed rounds, at least")
    parser.add_argument("--max-runs", type=int, default=100, help="timed rounds, at most")
    parser.add_argument("--seconds", type=float, default=3.0, help="time the rounds for at least this long")
    parser.add_argument("--no-rewrite", action="store_true", help="compile without the ecg-rewrite pass")
    parser.add_argument("--no-outline", action="store_true",
                        help="compile without ecg-outline-kernels (kernel boundaries drawn by the code generator)")
    parser.add_argument("--cpu", metavar="NAME", help="CPU to compile for (default: $DNNF_CPU or native)")
    parser.add_argument("--keep", metavar="DIR", help="keep the compiled models in DIR/<model>-t<threads>")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return parser


def _median_rounds(runners: dict, args) -> dict:
    times = {name: [] for name in runners}
    start = time.perf_counter()
    rounds = 0
    while rounds < args.max_runs and (rounds < args.min_runs or time.perf_counter() - start < args.seconds):
        for name, run in runners.items():
            t0 = time.perf_counter()
            run()
            times[name].append(1e3 * (time.perf_counter() - t0))
        rounds += 1
    return {name: float(np.median(values)) for name, values in times.items()} | {"runs": rounds}


def bench_model(path: Path, threads: int, outdir: Path, args) -> dict:
    report = compile_model(path, outdir, target="host", cpu=args.cpu, threads=threads, rewrite=not args.no_rewrite,
                           outline=not args.no_outline)
    artifact = Artifact(outdir)
    names = [name for name, _, _ in artifact.inputs]
    inputs = make_inputs(names, [TensorSpec(s, d) for _, d, s in artifact.inputs])
    dnnf = artifact.session(threads).bind(inputs)
    feeds = dict(zip(names, inputs))
    runners = {"dnnf": dnnf}
    for peer in PEERS:
        session = onnxruntime_session(path, optimize=peer == "ort_enable_all", threads=threads)
        runners[peer] = (lambda s: lambda: s.run(None, feeds))(session)
    for run in runners.values():
        for _ in range(args.warmup):
            run()
    reference = runners["ort_disable_all"]()
    medians = _median_rounds(runners, args)
    result = {
        "threads": threads,
        "dnnf_ms": medians["dnnf"],
        "runs": medians["runs"],
        "compile_seconds": report.manifest["compile_seconds"]["total"],
        "compile_stages": report.manifest["compile_seconds"],
        "kernels": report.manifest["kernels"],
        "unique_kernels": report.manifest["unique_kernels"],
        "rewrite": report.manifest["rewrite"],
        "rel_error": max(errors(g, w)[1] for g, w in zip(dnnf.outputs, reference)),
    }
    for peer in PEERS:
        result[f"{peer}_ms"] = medians[peer]
        result[f"ratio_{peer}"] = medians["dnnf"] / medians[peer]
    return result


def _geomean(values) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _before_after(rewrite: dict) -> tuple:
    """The table's ops and GFLOP columns: 'before>after', or one figure when unchanged."""
    return (
        change(rewrite["ops_before"], rewrite["ops_after"], arrow=">"),
        change(rewrite["flops_before"] / 1e9, rewrite["flops_after"] / 1e9, "{:.2f}", ">"),
    )


def _table(results: dict, threads: list) -> str:
    """One row per model and thread count; ops and GFLOP are before>after ecg-rewrite."""
    header = (f"{'model':<14} {'thr':>3} {'dnnf ms':>9} {'ort-off ms':>10} {'ort-all ms':>10} "
              f"{'/off':>6} {'/all':>6} {'compile s':>9} {'kernels':>7} {'rel err':>8} {'ops':>9} {'GFLOP':>13}")
    lines = [header, "-" * len(header)]
    for t in threads:
        for name, per_thread in results.items():
            r = per_thread.get(str(t))
            if r is None:
                continue
            ops, gflop = _before_after(r["rewrite"])
            lines.append(
                f"{name:<14} {t:>3} {r['dnnf_ms']:>9.2f} {r['ort_disable_all_ms']:>10.2f} {r['ort_enable_all_ms']:>10.2f} "
                f"{r['ratio_ort_disable_all']:>6.2f} {r['ratio_ort_enable_all']:>6.2f} {r['compile_seconds']:>9.1f} "
                f"{r['kernels']:>7} {r['rel_error']:>8.1e} {ops:>9} {gflop:>13}"
            )
        summary = _summary(results, t)
        lines.append(
            f"{'geomean':<14} {t:>3} {'':>9} {'':>10} {'':>10} {summary['geomean_ratio_ort_disable_all']:>6.2f} "
            f"{summary['geomean_ratio_ort_enable_all']:>6.2f}"
        )
    return "\n".join(lines)


def _summary(results: dict, t: int) -> dict:
    rows = [per_thread[str(t)] for per_thread in results.values() if str(t) in per_thread]
    summary = {}
    for peer in PEERS:
        ratios = [r[f"ratio_{peer}"] for r in rows]
        summary[f"geomean_ratio_{peer}"] = _geomean(ratios)
        summary[f"max_ratio_{peer}"] = max(ratios) if ratios else float("nan")
    return summary


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        raise ToolError(f"--threads expects numbers like 1,2, got '{args.threads}'") from None
    try:
        compiled_for = get_target("host", args.cpu)
    except ValueError as error:
        raise ToolError(str(error)) from None
    paths = [Path(m) for m in args.models]
    for path in paths:
        if not path.is_file():
            raise ToolError(f"no such model: {path}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="dnnf-bench-") as scratch:
        root = Path(args.keep) if args.keep else Path(scratch)
        for path in paths:
            results[path.stem] = {}
            for t in threads:
                try:
                    r = bench_model(path, t, root / f"{path.stem}-t{t}", args)
                except (CompileError, CodegenError, ConversionError, ArtifactError) as error:
                    raise ToolError(f"{path.name}: {error}") from None
                results[path.stem][str(t)] = r
                print(
                    f"{path.stem} threads={t}: dnnf {r['dnnf_ms']:.2f} ms, ORT_DISABLE_ALL {r['ort_disable_all_ms']:.2f} ms "
                    f"(x{r['ratio_ort_disable_all']:.2f}), ORT_ENABLE_ALL {r['ort_enable_all_ms']:.2f} ms "
                    f"(x{r['ratio_ort_enable_all']:.2f}); compiled in {r['compile_seconds']:.1f} s, "
                    f"{r['kernels']} kernels, rel error {r['rel_error']:.1e}",
                    flush=True,
                )
    print()
    print(_table(results, threads))
    if args.json:
        document = {
            "machine": {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                        "cpu": get_target("host", "native").cpu_name, "compiled_for": compiled_for.cpu_name},
            "models": results,
            "summary": {str(t): _summary(results, t) for t in threads},
        }
        tmp = Path(args.json).with_suffix(".tmp")
        tmp.write_text(json.dumps(document, indent=1) + "\n")
        tmp.replace(args.json)
    return 0


def entry():
    run_tool("dnnf-bench", main)


if __name__ == "__main__":
    entry()
