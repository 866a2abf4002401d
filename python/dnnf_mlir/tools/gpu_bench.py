"""dnnf-bench --target vulkan: dnnf-mlir's Vulkan code against IREE's on the same
device, model by model, in one process.

For each model: compile it for Vulkan (dnnf, fusion dnnf, through the compile cache as
on the CPU) and with IREE (``iree_peer``: imported, compiled for ``--iree-vulkan-target``,
default ``iree_peer.DEFAULT_VULKAN_TARGET``, Android's baseline), load both on
the Vulkan device found (lavapipe here), check both against the judged reference
(``checking``, as the CPU bench does), warm them up and time them in interleaved rounds
(``bench_runs.median_rounds``; a run includes uploading the inputs and reading the
outputs back, for both). Reported: the median milliseconds, the dispatches per inference
(dnnf: the manifest's; IREE: the ``flow.dispatch`` ops of its program) and dnnf's
distinct SPIR-V kernels, and the ratios dnnf / IREE (below 1: dnnf is better). A
model IREE cannot import, compile or run is reported with IREE's first error line.
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
from .iree_peer import IreeError, IreeSession, compile_for_vulkan, installed_version


def _say(message: str):
    print(message, flush=True)


def _iree_runner(path: Path, workdir: Path, inputs: list, judged, args):
    """(IREE's result entry, its runner or None when it failed)."""
    start = time.perf_counter()
    try:
        program = compile_for_vulkan(path, workdir, args.iree_vulkan_target)
        seconds = time.perf_counter() - start
        _say(f"{path.stem}: IREE ({program.vulkan_target}) compiled in {seconds:.1f} s, "
             f"{program.dispatches} dispatches")
        runner = IreeSession(program).bind(inputs)
        runner()
    except IreeError as error:
        _say(f"{path.stem}: IREE failed: {error}")
        return {"error": str(error)}, None
    checked = check_outputs(runner.outputs, judged)
    _say(f"{path.stem}: IREE's error {checked['error_ratio']:.2g} of the tolerance")  # inf: NaNs where the reference has none
    return {"dispatches": program.dispatches, "compile_seconds": seconds,
            "vulkan_target": program.vulkan_target} | checked, runner


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
        iree["ms"] = medians["iree"]
        result["ratio_ms"] = dnnf["ms"] / iree["ms"]
        result["ratio_dispatches"] = dnnf["dispatches"] / iree["dispatches"] if iree["dispatches"] else None
    return result


def progress_line(name: str, r: dict) -> str:
    """The line said when a model's timing is done."""
    iree = f"IREE {r['iree']['ms']:.2f} ms" if "ms" in r["iree"] else "IREE failed"
    return f"{name}: dnnf {r['dnnf']['ms']:.2f} ms, {iree}"


def table_cell(value, spec: str, width: int) -> str:
    """``value`` right-aligned in ``width`` with ``spec``, or a dash where there is none."""
    return f"{value:>{width}{spec}}" if value is not None else f"{'-':>{width}}"


def table(results: dict) -> str:
    """One row per model; IREE's failures after the table."""
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
            f"{table_cell(i.get('ms'), '.2f', 9)} {table_cell(i.get('dispatches'), '', 5)} "
            f"{table_cell(i.get('error_ratio'), '.2g', 8)} {table_cell(r.get('ratio_ms'), '.2f', 8)} "
            f"{table_cell(r.get('ratio_dispatches'), '.2f', 10)}")
    s = summary(results)
    lines.append(f"{'geomean':<14} {'':>9} {'':>5} {'':>8} {'':>8} {'':>9} {'':>5} {'':>8} "
                 f"{table_cell(s['geomean_ratio_ms'], '.2f', 8)} {table_cell(s['geomean_ratio_dispatches'], '.2f', 10)}")
    return "\n".join(lines + failures)


def summary(results: dict) -> dict:
    """Geometric means of the ratios over the models IREE ran, and how many those were."""
    ran = [r for r in results.values() if "ratio_ms" in r]
    return {"models_iree_ran": len(ran),
            "geomean_ratio_ms": geomean([r["ratio_ms"] for r in ran]) if ran else None,
            "geomean_ratio_dispatches": geomean([r["ratio_dispatches"] for r in ran if r["ratio_dispatches"]])
            if ran else None}


def write_json(path: str, results: dict, args):
    write_json_document(path, {"target": "vulkan", "iree_version": installed_version(),
                          "iree_vulkan_target": args.iree_vulkan_target, "models": results, "summary": summary(results)})


__all__ = ["bench_model", "progress_line", "summary", "table", "table_cell", "write_json"]
