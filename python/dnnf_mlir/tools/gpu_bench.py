"""dnnf-bench --target vulkan: dnnf-mlir's Vulkan code against IREE's on the same
device, model by model, in one process.

For each model: compile it for Vulkan (dnnf, fusion dnnf, through the compile cache as
on the CPU) and with IREE (``iree_peer``: imported, compiled for ``--iree-vulkan-target``,
default ``iree_peer.DEFAULT_VULKAN_TARGET``, Android's baseline), load both on
the Vulkan device found (lavapipe here), check both against the judged reference
(``checking``, as the CPU bench does), warm them up and time them in interleaved rounds
(``bench_runs.median_rounds``; a run includes uploading the inputs and reading the
outputs back, for both). IREE's first run goes in a process of its own under a time
limit (``--iree-seconds``): on lavapipe IREE's code for a CNN can take many minutes a
run, so a run past the limit is stopped and reported as a bound (IREE over the limit,
the ratio under its bound), and where the first is too slow for rounds the second is
IREE's one timed run. Reported: the median milliseconds, the dispatches per inference
(dnnf: the manifest's; IREE: the ``flow.dispatch`` ops of its program) and dnnf's
distinct SPIR-V kernels, and the ratios dnnf / IREE (below 1: dnnf is better). A model
IREE cannot import, compile or run is reported with IREE's first error line.
"""

import time
from pathlib import Path

from ..cache import CompileCache
from ..checking import informative_inputs
from ..ecg import TensorSpec
from ..frontend.onnx_importer import load_model
from ..session import ModelSource
from .bench_runs import check_outputs, compile_mode, geomean, median_rounds
from .common import onnxruntime_session, write_json_document
from .float64_reference import judged_reference
from .iree_peer import IreeError, IreeProcess, IreeSession, compile_for_vulkan, installed_version


def _say(message: str):
    print(message, flush=True)


def _iree_runner(path: Path, workdir: Path, inputs: list, judged, args):
    """(IREE's result entry, its runner for the timed rounds or None). Its first run, in
    a process of its own, is checked; a run not done within --iree-seconds is stopped and
    IREE's latency reported as over that; when the first is so slow that warming up and
    timing it in rounds would take longer, the run after it is IREE's one timed run."""
    start = time.perf_counter()
    try:
        program = compile_for_vulkan(path, workdir, args.iree_vulkan_target)
        seconds = time.perf_counter() - start
        _say(f"{path.stem}: IREE ({program.vulkan_target}) compiled in {seconds:.1f} s, "
             f"{program.dispatches} dispatches")
        entry = {"dispatches": program.dispatches, "compile_seconds": seconds, "vulkan_target": program.vulkan_target}
        with IreeProcess(program, inputs) as process:
            first = process.run(args.iree_seconds)
            if first is None:
                _say(f"{path.stem}: IREE had not finished a run after {args.iree_seconds:g} s: stopped")
                return entry | {"ms_over": 1e3 * args.iree_seconds}, None
            entry |= check_outputs(first.outputs, judged)
            _say(f"{path.stem}: IREE's error {entry['error_ratio']:.2g} of the tolerance")  # inf: NaNs where the reference has none
            if first.ms * (args.warmup + 2 * args.min_runs) > 1e3 * args.iree_seconds:
                _say(f"{path.stem}: IREE took {first.ms / 1e3:.1f} s a run: its time is the next run's")
                second = process.run(args.iree_seconds)
                return entry | ({"ms": second.ms, "runs": 1} if second else {"ms_over": 1e3 * args.iree_seconds}), None
        runner = IreeSession(program).bind(inputs)
    except IreeError as error:
        _say(f"{path.stem}: IREE failed: {error}")
        return {"error": str(error)}, None
    return entry, runner


def bench_model(path: Path, options, outdir: Path, args) -> dict:
    """dnnf's Vulkan code and IREE's for ``path``, checked and timed."""
    source = ModelSource(path, None if args.no_cache else CompileCache())
    _say(f"{path.stem}: compiling for vulkan (dnnf)")
    artifact, session, compiled = compile_mode(path, source, options, outdir / "dnnf", args)
    manifest = artifact.manifest
    reference_session = onnxruntime_session(path)
    names = [name for name, _, _ in artifact.inputs]
    inputs, reference, scale = informative_inputs(
        names, [TensorSpec(s, d) for _, d, s in artifact.inputs],
        lambda values: reference_session.run(None, dict(zip(names, values))))
    judged = judged_reference(load_model(path), dict(zip(names, inputs)), reference)
    runners = {"dnnf": session.bind(inputs)}
    runners["dnnf"]()
    dnnf = {"device": session.device, "dispatches": manifest["dispatches"], "spirv_kernels": manifest["spirv_kernels"],
            "kernels": manifest["kernels"], "unique_kernels": manifest["unique_kernels"],
            "compile_seconds": manifest["compile_seconds"]["total"], "cached": not compiled,
            } | check_outputs(runners["dnnf"].outputs, judged)
    _say(f"{path.stem}: dnnf on {dnnf['device']}: {dnnf['dispatches']} dispatches, {dnnf['spirv_kernels']} distinct "
         f"kernels, error {dnnf['error_ratio']:.2g} of the tolerance ({dnnf['tolerance']})")
    iree, iree_runner = _iree_runner(path, outdir / "iree", inputs, judged, args)
    if iree_runner is not None:
        runners["iree"] = iree_runner
    _say(f"{path.stem}: timing {', '.join(runners)}")
    for run in runners.values():
        for _ in range(args.warmup):
            run()
    medians = median_rounds(runners, args)
    dnnf["ms"] = medians["dnnf"]
    result = {"runs": medians["runs"], "input_scale": scale, "dnnf": dnnf, "iree": iree}
    if iree_runner is not None:
        iree |= {"ms": medians["iree"], "runs": medians["runs"]}
    if "ms" in iree:
        result["ratio_ms"] = dnnf["ms"] / iree["ms"]
    elif "ms_over" in iree:
        result["ratio_ms_under"] = dnnf["ms"] / iree["ms_over"]
    if "dispatches" in iree:
        result["ratio_dispatches"] = dnnf["dispatches"] / iree["dispatches"] if iree["dispatches"] else None
    return result


def _iree_ms(iree: dict) -> str:
    """IREE's latency in words: its milliseconds, the time limit it ran past, or failed."""
    if "ms" in iree:
        return f"IREE {iree['ms']:.2f} ms"
    return f"IREE over {iree['ms_over'] / 1e3:g} s" if "ms_over" in iree else "IREE failed"


def progress_line(name: str, r: dict) -> str:
    """The line said when a model's timing is done."""
    return f"{name}: dnnf {r['dnnf']['ms']:.2f} ms, {_iree_ms(r['iree'])}"


def table_cell(value, spec: str, width: int) -> str:
    """``value`` right-aligned in ``width`` with ``spec``, or a dash where there is none."""
    return f"{value:>{width}{spec}}" if value is not None else f"{'-':>{width}}"


def _bound_cell(exact, bound, sign: str, spec: str, width: int) -> str:
    """``exact`` as ``table_cell`` does, else ``bound`` after ``sign`` (``>``, ``<``)."""
    return table_cell(exact, spec, width) if bound is None else f"{sign + format(bound, spec):>{width}}"


def table(results: dict) -> str:
    """One row per model (``>``/``<``: IREE ran past its time limit, so the bound); IREE's
    failures after the table."""
    header = (f"{'model':<14} {'dnnf ms':>9} {'disp':>5} {'distinct':>8} {'err/tol':>8} "
              f"{'IREE ms':>9} {'disp':>5} {'err/tol':>8} {'ms ratio':>8} {'disp ratio':>10}")
    lines = [header, "-" * len(header)]
    failures = []
    for name, r in results.items():
        d, i = r["dnnf"], r["iree"]
        if "error" in i:
            failures.append(f"{name}: IREE failed: {i['error']}")
        lines.append(
            f"{name:<14} {d['ms']:>9.2f} {d['dispatches']:>5} {d['spirv_kernels']:>8} {d['error_ratio']:>8.2g} "
            f"{_bound_cell(i.get('ms'), i.get('ms_over'), '>', '.0f' if 'ms_over' in i else '.2f', 9)} "
            f"{table_cell(i.get('dispatches'), '', 5)} {table_cell(i.get('error_ratio'), '.2g', 8)} "
            f"{_bound_cell(r.get('ratio_ms'), r.get('ratio_ms_under'), '<', '.2g' if 'ratio_ms_under' in r else '.2f', 8)} "
            f"{table_cell(r.get('ratio_dispatches'), '.2f', 10)}")
    s = summary(results)
    geomean_ms = (None, s["geomean_ratio_ms"]) if s["geomean_ratio_ms_is_upper_bound"] else (s["geomean_ratio_ms"], None)
    lines.append(f"{'geomean':<14} {'':>9} {'':>5} {'':>8} {'':>8} {'':>9} {'':>5} {'':>8} "
                 f"{_bound_cell(*geomean_ms, '<', '.2f', 8)} {table_cell(s['geomean_ratio_dispatches'], '.2f', 10)}")
    return "\n".join(lines + failures)


def summary(results: dict) -> dict:
    """Geometric means of the ratios over the models IREE ran or ran past its time limit
    on (there the bound: the mean is then an upper bound), and how many each were."""
    timed = [r.get("ratio_ms", r.get("ratio_ms_under")) for r in results.values()]
    timed = [ratio for ratio in timed if ratio is not None]
    over = sum("ratio_ms_under" in r for r in results.values())
    dispatches = [r["ratio_dispatches"] for r in results.values() if r.get("ratio_dispatches")]
    return {"models_iree_ran": len(timed) - over, "models_iree_over_time": over,
            "geomean_ratio_ms": geomean(timed) if timed else None, "geomean_ratio_ms_is_upper_bound": over > 0,
            "geomean_ratio_dispatches": geomean(dispatches) if dispatches else None}


def write_json(path: str, results: dict, args, failures: dict):
    """The results, the models that failed (name -> why) and the summary, as JSON."""
    write_json_document(path, {"target": "vulkan", "iree_version": installed_version(),
                          "iree_vulkan_target": args.iree_vulkan_target, "models": results, "failed": failures,
                          "summary": summary(results)})


__all__ = ["bench_model", "progress_line", "summary", "table", "table_cell", "write_json"]
