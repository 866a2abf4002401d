"""dnnf-bench: compiled dnnf-mlir code against onnxruntime, model by model, fusion
mode by fusion mode.

    dnnf-bench resnet50.onnx bert_base.onnx --threads 1,2 --json bench.json
    dnnf-bench bert_base.onnx --fusion dnnf --threads 1
    dnnf-bench squeezenet.onnx resnet50.onnx --target vulkan --json vk.json
    dnnf-bench squeezenet.onnx mobilebert.onnx --target opencl --precision fp16 --json cl.json
    dnnf-bench --kernels [--families resize,lstm] --json kernels.json

--kernels sweeps the kernel of each op family instead of models (one-node models at
representative shapes, each against onnxruntime ORT_ENABLE_ALL on one thread and
against this machine's roofline, worst first: dnnf_mlir/kernel_sweep/); --families
picks families (or cases) by name.

--target vulkan compares dnnf's Vulkan code with IREE's on the same device (gpu_bench.py:
latency, dispatches per inference). --target opencl times dnnf's OpenCL code on the
OpenCL device found against dnnf's own Vulkan code on the Vulkan device found (lavapipe
here) and onnxruntime on the CPU, in the same process run: IREE has no OpenCL target
(opencl_bench.py; with --precision fp16, OpenCL in fp32 too). On both, --threads and
fusion modes other than dnnf are refused, the other options apply as on the host. The
rest of this describes the host bench.

For each model and thread count, in this one process: compile for the host with that
many threads once per fusion mode (--fusion, default dnnf,tvm,none: ecg-fuse's
planners side by side; the compile time and the kernels launched per run are
reported), load the libraries, open onnxruntime sessions with graph optimizations
off (ORT_DISABLE_ALL: one kernel per ONNX node) and on (ORT_ENABLE_ALL), warm them
all up, then time them in interleaved rounds -- one timed run of each per round,
right after an untimed one of the same, so that a change in machine load hits all
alike and none runs with caches that another has just filled, each following each
other equally often (``bench_runs.balanced_orders``) -- and report medians
and the ratios dnnf / onnxruntime (below 1: dnnf is faster), and each mode's
speed-up over none. A ratio is the ratio of the two medians ("/off", "/all"; JSON
``ratio_<peer>``); "/all r" (``round_ratio_<peer>``) is the median over rounds of the
ratio of the two runs of the same round, which a VM changing speed for seconds at a
time affects less (``bench_runs.median_round_ratio``). Likewise "none r"
(``round_speedup_over_none``) is the median over rounds of none's time over the mode's
in the same round, the verdict on "fusion never loses" (below 1: the mode is slower
than none); ``speedup_over_none`` is the ratio of the medians. The geomean row and the
JSON summary give the geometric mean of each (``geomean_ratio_<peer>``,
``geomean_round_ratio_<peer>``, ``geomean_round_speedup_over_none``) and the JSON its
worst (``max_...``; for the speed-ups over none, ``min_...``). Outputs are checked as dnnf-run --check checks
them, on the same informative inputs (dnnf_mlir/checking.py): against the model run in float64 once
(else ORT_DISABLE_ALL's), the tolerance widened to four times ORT_DISABLE_ALL's own error
against float64 where that is larger; "err/tol" is the error over the tolerance
(above 1: wrong), and the output says how the tolerance was derived and names a
degenerate reference.

Each model is compiled after the ecg-rewrite pass (--no-rewrite: without it); the
table shows its ops and GFLOP before>after rewriting, the JSON the reports of
ecg-rewrite and ecg-fuse. Fusion decides Table 3's yellow cells conservatively unless
--profile (then by the profiling database, measuring what it lacks), as dnnf-compile
and the session do. --no-outline compiles with the kernel boundaries the code
generator draws by itself, the pipeline before kernel functions. Each compilation
shows its stages on stderr as it goes (as dnnf-compile's do). What was compiled is
kept in the compile cache and taken from it next time (the compile times shown are
then the first compilation's); --no-cache compiles afresh.
"""

import argparse
import os
import platform
import tempfile
from dataclasses import replace
from pathlib import Path

from ..cache import CompileCache
from ..checking import informative_inputs
from ..codegen import CodegenError, get_target
from ..compiler import ArtifactError, CompileError, CompileOptions
from ..compiler.options import add_option_arguments, from_arguments
from ..conversion import ConversionError
from ..ecg import TensorSpec
from ..frontend.onnx_importer import OnnxImportError, load_model
from ..kernel_sweep.cases import cases_of
from ..kernel_sweep.sweep import json_document, run_sweep, table
from ..fusion import MODES
from ..session import ModelSource
from ..roofline import RooflineError, machine_roofline
from ..statistics import change
from . import gpu_bench, opencl_bench
from .bench_runs import check_outputs, compile_mode, geomean, median_round_ratio, medians, timed_rounds
from .common import ToolError, onnxruntime_session, run_tool, tool_parser, write_json_document
from .float64_reference import judged_reference
from .iree_peer import DEFAULT_VULKAN_TARGET
from .progress_display import progress_display

PEERS = ("ort_disable_all", "ort_enable_all")
GPU_BENCHES = {"vulkan": gpu_bench, "opencl": opencl_bench}  # --target -> its bench module
GPU_API_NAMES = {"vulkan": "Vulkan", "opencl": "OpenCL"}


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-bench", __doc__)
    parser.add_argument("models", nargs="*", metavar="MODEL", help="ONNX models")
    parser.add_argument("--kernels", action="store_true",
                        help="sweep the op families' kernels (one-node models) instead of models")
    parser.add_argument("--families", metavar="LIST", help="with --kernels: comma-separated families or cases")
    parser.add_argument("--target", choices=("host", *GPU_BENCHES), default="host",
                        help="host: dnnf against onnxruntime on this CPU (the default); vulkan: dnnf against "
                        "IREE on the Vulkan device found (see dnnf_mlir/tools/gpu_bench.py); opencl: dnnf on the "
                        "OpenCL device found against dnnf's Vulkan on the Vulkan device found and onnxruntime "
                        "on the CPU, in the same process run (IREE has no OpenCL target; see "
                        "dnnf_mlir/tools/opencl_bench.py)")
    parser.add_argument("--threads", help="comma-separated thread counts (default 1,2; host only)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each before timing")
    parser.add_argument("--min-runs", type=int, default=10, help="timed rounds, at least")
    parser.add_argument("--max-runs", type=int, default=100, help="timed rounds, at most")
    parser.add_argument("--seconds", type=float, default=3.0, help="time the rounds for at least this long")
    parser.add_argument("--fusion", help=f"comma-separated fusion modes to compare (default {','.join(MODES)}; "
                        "vulkan: dnnf only)")
    parser.add_argument("--iree-vulkan-target", default=DEFAULT_VULKAN_TARGET, metavar="NAME",
                        help="the IREE peer's --iree-vulkan-target with --target vulkan (default "
                        f"{DEFAULT_VULKAN_TARGET}: see dnnf_mlir/tools/iree_peer.py)")
    parser.add_argument("--iree-seconds", type=float, default=600.0, metavar="S",
                        help="with --target vulkan: IREE's time limit for a run (default 600): a run past it is "
                        "stopped and IREE's latency reported as over S; a run so slow that the warm-up and rounds "
                        "would take longer than S is timed once (IREE's code for a CNN can take minutes a run on "
                        "lavapipe)")
    add_option_arguments(parser, skip=("target", "threads", "fusion"))  # host only; threads and modes are lists
    parser.add_argument("--keep", metavar="DIR", help="keep the compiled models in DIR/<model>-t<threads>/<fusion mode> "
                        "(vulkan: DIR/<model>/dnnf and DIR/<model>/iree)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--no-cache", action="store_true",
                        help="compile afresh and leave the compile cache ($DNNF_CACHE_DIR, see dnnf-cache) alone")
    return parser


def bench_model(path: Path, options: CompileOptions, outdir: Path, modes: list, args) -> dict:
    """Compile ``path`` with ``options`` in each fusion mode and time them with onnxruntime."""
    source = ModelSource(path, None if args.no_cache else CompileCache())
    threads = options.threads
    loaded = {mode: compile_mode(path, source, replace(options, fusion=mode), outdir / mode, args) for mode in modes}
    artifacts = {mode: artifact for mode, (artifact, _, _) in loaded.items()}
    compiled = {mode: artifact.manifest for mode, artifact in artifacts.items()}
    sessions = {peer: onnxruntime_session(path, optimize=peer == "ort_enable_all", threads=threads) for peer in PEERS}
    # Every mode compiles the same model: one set of inputs serves all of them.
    signature = artifacts[modes[0]].inputs
    names = [name for name, _, _ in signature]
    inputs, reference, scale = informative_inputs(
        names, [TensorSpec(s, d) for _, d, s in signature],
        lambda values: sessions["ort_disable_all"].run(None, dict(zip(names, values))))
    feeds = dict(zip(names, inputs))
    judged = judged_reference(load_model(path), feeds, reference)
    runners = {mode: library.bind(inputs) for mode, (_, library, _) in loaded.items()}
    for peer, session in sessions.items():
        runners[peer] = (lambda s: lambda: s.run(None, feeds))(session)
    for run in runners.values():
        for _ in range(args.warmup):
            run()
    times, rounds = timed_rounds(runners, args)
    median = medians(times)
    result = {"threads": threads, "runs": rounds, "rewrite": compiled[modes[0]]["rewrite"],
              "input_scale": scale, "modes": {}}
    for peer in PEERS:
        result[f"{peer}_ms"] = median[peer]
    for mode in modes:
        manifest = compiled[mode]
        entry = {
            "ms": median[mode],
            "compile_seconds": manifest["compile_seconds"]["total"],
            "cached": not loaded[mode][2],  # taken from the compile cache: compile_seconds are the first compile's
            "compile_stages": manifest["compile_seconds"],
            "kernels": manifest["kernels"],
            "unique_kernels": manifest["unique_kernels"],
            "fusion": manifest["fusion"],
        }
        entry |= check_outputs(runners[mode].outputs, judged)
        for peer in PEERS:
            entry[f"ratio_{peer}"] = median[mode] / median[peer]
            entry[f"round_ratio_{peer}"] = median_round_ratio(times[mode], times[peer])
        if "none" in modes:
            entry["speedup_over_none"] = median["none"] / median[mode]
            entry["round_speedup_over_none"] = median_round_ratio(times["none"], times[mode])
        result["modes"][mode] = entry
    return result


def _before_after(rewrite: dict) -> tuple:
    """The table's ops and GFLOP columns: 'before>after', or one figure when unchanged."""
    return (
        change(rewrite["ops_before"], rewrite["ops_after"], arrow=">"),
        change(rewrite["flops_before"] / 1e9, rewrite["flops_after"] / 1e9, "{:.2f}", ">"),
    )


def _table(results: dict, threads: list, modes: list) -> str:
    """One row per model, thread count and mode; ops and GFLOP are before>after ecg-rewrite."""
    header = (f"{'model':<14} {'thr':>3} {'fusion':<6} {'ms':>9} {'ort-off ms':>10} {'ort-all ms':>10} "
              f"{'/off':>6} {'/all':>6} {'/all r':>6} {'none r':>6} {'kernels':>7} {'distinct':>8} {'compile s':>9} {'err/tol':>8} {'ops':>9} {'GFLOP':>13}")
    lines = [header, "-" * len(header)]
    for t in threads:
        for name, per_thread in results.items():
            r = per_thread.get(str(t))
            if r is None:
                continue
            ops, gflop = _before_after(r["rewrite"])
            for mode in modes:
                m = r["modes"][mode]
                over_none = m.get("round_speedup_over_none")
                lines.append(
                    f"{name:<14} {t:>3} {mode:<6} {m['ms']:>9.2f} {r['ort_disable_all_ms']:>10.2f} "
                    f"{r['ort_enable_all_ms']:>10.2f} {m['ratio_ort_disable_all']:>6.2f} {m['ratio_ort_enable_all']:>6.2f} "
                    f"{m['round_ratio_ort_enable_all']:>6.2f} {_speedup_cell(over_none)} {m['kernels']:>7} {m['unique_kernels']:>8} {m['compile_seconds']:>9.1f} {m['error_ratio']:>8.2g} "
                    f"{ops:>9} {gflop:>13}"
                )
        for mode, summary in summary_of(results, t, modes).items():
            over_none = summary.get("geomean_speedup_over_none")
            lines.append(
                f"{'geomean':<14} {t:>3} {mode:<6} {'':>9} {'':>10} {'':>10} {summary['geomean_ratio_ort_disable_all']:>6.2f} "
                f"{summary['geomean_ratio_ort_enable_all']:>6.2f} {summary['geomean_round_ratio_ort_enable_all']:>6.2f} "
                f"{_speedup_cell(summary.get('geomean_round_speedup_over_none'))}"
                + (f"   x{over_none:.2f} over none (per round x{summary['geomean_round_speedup_over_none']:.2f}, "
                   f"worst x{summary['min_round_speedup_over_none']:.2f})" if over_none and mode != "none" else "")
            )
    return "\n".join(lines)


def _speedup_cell(speedup) -> str:
    """The "none r" column: blank without fusion none among the modes."""
    return f"{speedup:>6.2f}" if speedup is not None else f"{'':>6}"


def summary_of(results: dict, t: int, modes: list) -> dict:
    """Per mode: geometric means of the ratios to the peers and of the speed-ups over
    none, with the worst of each (the largest ratio, the smallest speed-up)."""
    rows = [per_thread[str(t)]["modes"] for per_thread in results.values() if str(t) in per_thread]
    ratios = [f"{kind}_{peer}" for kind in ("ratio", "round_ratio") for peer in PEERS]
    speedups = ["speedup_over_none", "round_speedup_over_none"] if "none" in modes else []
    summary = {}
    for mode in modes:
        entry = {}
        for key in ratios + speedups:
            values = [row[mode][key] for row in rows]
            entry[f"geomean_{key}"] = geomean(values)
            worst = ("max", max) if key in ratios else ("min", min)
            entry[f"{worst[0]}_{key}"] = worst[1](values) if values else float("nan")
        summary[mode] = entry
    return summary


def _resolved(args, **overrides) -> tuple:
    """The compile options of the flags with ``overrides``, and their target."""
    try:
        options = from_arguments(args, **overrides)
        return options, options.resolve_target()
    except ValueError as error:
        raise ToolError(str(error)) from None


def _bench_each(args, bench) -> tuple:
    """(model name -> ``bench(path, directory)``, model name -> why it failed) over the
    models, the directory their compilations go under (--keep's or a scratch one), in the
    progress display. A model that fails to import, compile or run is said in one line as
    it happens and the others are still benchmarked: an hour-long table is not lost to
    one model (a GPU run past the device's time limit, an op not supported)."""
    paths = [Path(m) for m in args.models]
    for path in paths:
        if not path.is_file():
            raise ToolError(f"no such model: {path}")
    results, failures = {}, {}
    with tempfile.TemporaryDirectory(prefix="dnnf-bench-") as scratch, progress_display("dnnf-bench"):
        root = Path(args.keep) if args.keep else Path(scratch)
        for path in paths:
            try:
                results[path.stem] = bench(path, root)
            except (OnnxImportError, CompileError, CodegenError, ConversionError, ArtifactError) as error:
                failures[path.stem] = f"{path.name}: {error}"
                print(f"dnnf-bench: failed: {failures[path.stem]}", flush=True)
    return results, failures


def _finish(failures: dict) -> int:
    """The failed models again after the table, and the exit status: 1 if any failed."""
    for message in failures.values():
        print(f"failed: {message}")
    return 1 if failures else 0


def main_gpu(args) -> int:
    """dnnf-bench --target vulkan|opencl: its bench module over the models, one compile mode."""
    target, bench_module = args.target, GPU_BENCHES[args.target]
    if args.threads is not None:
        raise ToolError(f"--threads is for --target host: the {GPU_API_NAMES[target]} target runs on the GPU, "
                        "not OpenMP threads")
    if args.fusion not in (None, "dnnf"):
        raise ToolError(f"--target {target} benchmarks fusion dnnf; --fusion {args.fusion} is host only")
    options, _ = _resolved(args, target=target, threads=1, fusion="dnnf")

    def bench(path: Path, root: Path) -> dict:
        r = bench_module.bench_model(path, options, root / path.stem, args)
        print(bench_module.progress_line(path.stem, r), flush=True)
        return r

    results, failures = _bench_each(args, bench)
    print()
    print(bench_module.table(results))
    if args.json:
        bench_module.write_json(args.json, results, args, failures)
    return _finish(failures)


def main_kernels(args) -> int:
    """dnnf-bench --kernels: the kernel sweep (``kernel_sweep``), its table last."""
    if args.models:
        raise ToolError("--kernels sweeps its own one-node models; give no MODEL")
    try:
        cases = cases_of(args.families.split(",") if args.families else None)
        roofline = machine_roofline(cpu=args.cpu)
    except (ValueError, RooflineError) as error:
        raise ToolError(str(error)) from None
    with progress_display("dnnf-bench"):
        results, floor = run_sweep(cases, roofline, args, Path(args.keep) if args.keep else None, args.cpu)
    print(table(results, roofline, floor))
    if args.json:
        write_json_document(args.json, json_document(results, roofline, floor))
    return 0


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    if args.kernels:
        return main_kernels(args)
    if not args.models:
        raise ToolError("give ONNX models to benchmark, or --kernels")
    if args.target in GPU_BENCHES:
        return main_gpu(args)
    args.threads = args.threads or "1,2"
    args.fusion = args.fusion or ",".join(MODES)
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        raise ToolError(f"--threads expects numbers like 1,2, got '{args.threads}'") from None
    modes = [m.strip() for m in args.fusion.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ToolError(f"--fusion expects modes among {', '.join(MODES)}, got '{args.fusion}'")
    options, compiled_for = _resolved(args, threads=threads[0], fusion=modes[0])  # each benchmark's threads and mode

    def bench(path: Path, root: Path) -> dict:
        per_thread = {}
        for t in threads:
            r = bench_model(path, replace(options, threads=t), root / f"{path.stem}-t{t}", modes, args)
            per_thread[str(t)] = r
            print(f"{path.stem} threads={t}: ORT_DISABLE_ALL {r['ort_disable_all_ms']:.2f} ms, "
                  f"ORT_ENABLE_ALL {r['ort_enable_all_ms']:.2f} ms", flush=True)
            for mode, m in r["modes"].items():
                print(f"  fusion={mode}: {m['ms']:.2f} ms (x{m['ratio_ort_disable_all']:.2f} / "
                      f"x{m['ratio_ort_enable_all']:.2f}, per round x{m['round_ratio_ort_enable_all']:.2f}"
                      + (f"; over none per round x{m['round_speedup_over_none']:.2f}" if "none" in r["modes"] and mode != "none" else "")
                      + f"); compiled in {m['compile_seconds']:.1f} s"
                      f"{' (earlier: from the compile cache)' if m['cached'] else ''}, "
                      f"{m['kernels']} kernels ({m['unique_kernels']} distinct), error {m['error_ratio']:.2g} "
                      f"of the tolerance ({m['tolerance']})"
                      + "".join(f"; degenerate reference: {d}" for d in m["degenerate"]),
                      flush=True)
        return per_thread

    results, failures = _bench_each(args, bench)
    print()
    print(_table(results, threads, modes))
    if args.json:
        document = {
            "machine": {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                        "cpu": get_target("host", "native").cpu_name, "compiled_for": compiled_for.cpu_name},
            "models": results,
            "summary": {str(t): summary_of(results, t, modes) for t in threads},
            "failed": failures,
        }
        write_json_document(args.json, document)
    return _finish(failures)


def entry():
    run_tool("dnnf-bench", main)


if __name__ == "__main__":
    entry()
