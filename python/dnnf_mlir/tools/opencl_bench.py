"""dnnf-bench --target opencl: dnnf-mlir's OpenCL code on the OpenCL device found (PoCL
here), against dnnf's own Vulkan code on the Vulkan device found (lavapipe here) and
onnxruntime on this CPU, model by model, in one process. IREE, the Vulkan bench's peer,
has no OpenCL target.

For each model: compile it for OpenCL and for Vulkan (dnnf, fusion dnnf, in the
--precision asked, through the compile cache as on the CPU; with --precision fp16, also
OpenCL in fp32, so that one run gives fp16 against fp32 on the same device), load them,
check every one against the reference (fp32: the judged float64 reference of
``checking``, as the CPU bench does; fp16: onnxruntime float32 with the fp16 bound of
``half_tolerance``), warm them up and time them with onnxruntime (ORT_ENABLE_ALL, its
default threads) in interleaved rounds (``bench_runs.median_rounds``; a run includes
uploading the inputs and reading the outputs back). Reported: the median milliseconds,
the dispatches per inference and distinct OpenCL kernels, and the ratios OpenCL / Vulkan
and OpenCL / onnxruntime (below 1: OpenCL is faster). A Vulkan peer that cannot compile
or load is reported with its error.
"""

from dataclasses import replace
from pathlib import Path

from ..cache import CompileCache
from ..checking import compare, informative_inputs
from ..codegen import CodegenError
from ..compiler import ArtifactError, CompileError
from ..ecg import TensorSpec
from ..frontend.onnx_importer import load_model
from ..half_tolerance import describe_half_tolerance, half_tolerance, longest_accumulation
from ..session import ModelSource
from .bench_runs import check_outputs, compile_mode, geomean, median_rounds
from .common import onnxruntime_session, write_json_document
from .float64_reference import judged_reference
from .gpu_bench import table_cell


def _say(message: str):
    print(message, flush=True)


def _checked(outputs: list, reference: dict, precision: str) -> dict:
    """``bench_runs.check_outputs``'s fields for ``outputs`` in ``precision``: fp16 against
    onnxruntime float32 within the fp16 bound, fp32 against the judged reference."""
    if precision != "fp16":
        return check_outputs(outputs, reference["judged"])
    want, accumulation = reference["fp32"], reference["accumulation"]
    checks = [(compare(g, w, *half_tolerance(w, accumulation)), w) for g, w in zip(outputs, want)]
    worst, worst_want = max(checks, key=lambda check: check[0].ratio)
    return {"error_ratio": worst.ratio,
            "tolerance": f"{worst.derivation()} against onnxruntime float32; "
                         f"{describe_half_tolerance(worst_want, accumulation)}",
            "degenerate": sorted({c.degenerate for c, _ in checks if c.degenerate})}


def _compiled(label: str, path: Path, source, options, outdir: Path, inputs_of, args):
    """(the result entry of ``options``' code, its loaded session) for ``label``."""
    _say(f"{path.stem}: compiling for {options.target} in {options.precision} (dnnf)")
    artifact, session, compiled = compile_mode(path, source, options, outdir / label, args)
    manifest = artifact.manifest
    inputs = inputs_of(artifact)
    entry = {"device": session.device, "precision": options.precision, "dispatches": manifest["dispatches"],
             "kernels": manifest["kernels"], "unique_kernels": manifest["unique_kernels"],
             "compile_seconds": manifest["compile_seconds"]["total"], "cached": not compiled}
    if "opencl_kernels" in manifest:
        entry["opencl_kernels"] = manifest["opencl_kernels"]
    return entry, session.bind(inputs)


def bench_model(path: Path, options, outdir: Path, args) -> dict:
    """dnnf's OpenCL code, its Vulkan code and onnxruntime for ``path``, checked and timed."""
    source = ModelSource(path, None if args.no_cache else CompileCache())
    ort = onnxruntime_session(path, optimize=True)
    reference_session = onnxruntime_session(path)
    prepared = {}

    def inputs_of(artifact):
        """The informative inputs (made once, from the first artifact's signature) and the references."""
        if not prepared:
            names = [name for name, _, _ in artifact.inputs]
            inputs, want, scale = informative_inputs(
                names, [TensorSpec(s, d) for _, d, s in artifact.inputs],
                lambda values: reference_session.run(None, dict(zip(names, values))))
            model = load_model(path)
            prepared.update(names=names, inputs=inputs, scale=scale, fp32=want,
                            accumulation=longest_accumulation(model),
                            judged=judged_reference(model, dict(zip(names, inputs)), want))
        return prepared["inputs"]

    variants = {"opencl": options}
    if options.precision == "fp16":
        variants["opencl_fp32"] = replace(options, precision="fp32")
    variants["vulkan"] = replace(options, target="vulkan")
    entries, runners = {}, {}
    for label, variant in variants.items():
        try:
            entry, runner = _compiled(label, path, source, variant, outdir, inputs_of, args)
            runner()
        except (CompileError, CodegenError, ArtifactError) as error:
            if label == "opencl":
                raise
            _say(f"{path.stem}: {label} failed: {str(error).splitlines()[0]}")
            entries[label] = {"error": str(error).splitlines()[0]}
            continue
        entries[label] = entry | _checked(runner.outputs, prepared, variant.precision)
        runners[label] = runner
        _say(f"{path.stem}: {label} on {entry['device']}: {entry['dispatches']} dispatches, error "
             f"{entries[label]['error_ratio']:.2g} of the tolerance ({entries[label]['tolerance']})")
    feeds = dict(zip(prepared["names"], prepared["inputs"]))
    feeds = {i.name: feeds[i.name] for i in ort.get_inputs()}
    runners["onnxruntime"] = lambda: ort.run(None, feeds)
    _say(f"{path.stem}: timing {', '.join(runners)}")
    for run in runners.values():
        for _ in range(args.warmup):
            run()
    medians = median_rounds(runners, args)
    for label in runners:
        entries.setdefault(label, {})["ms"] = medians[label]
    result = {"runs": medians["runs"], "input_scale": prepared["scale"], **entries}
    for peer in ("opencl_fp32", "vulkan", "onnxruntime"):
        if peer in runners:
            result[f"ratio_ms_{peer}"] = medians["opencl"] / medians[peer]
    return result


def progress_line(name: str, r: dict) -> str:
    """The line said when a model's timing is done."""
    peers = [f"{label} {r[label]['ms']:.2f} ms" if "ms" in r[label] else f"{label} failed"
             for label in ("opencl_fp32", "vulkan", "onnxruntime") if label in r]
    return f"{name}: opencl {r['opencl']['ms']:.2f} ms, {', '.join(peers)}"


def table(results: dict) -> str:
    """One row per model; the Vulkan peer's failures after the table."""
    header = (f"{'model':<14} {'prec':<4} {'OpenCL ms':>9} {'disp':>5} {'distinct':>8} {'err/tol':>8} "
              f"{'fp32 ms':>9} {'Vulkan ms':>9} {'err/tol':>8} {'ORT ms':>9} {'/fp32':>6} {'/Vulkan':>7} {'/ORT':>6}")
    lines = [header, "-" * len(header)]
    failures = []
    for name, r in results.items():
        o, v = r["opencl"], r["vulkan"]
        if "error" in v:
            failures.append(f"{name}: Vulkan failed: {v['error']}")
        lines.append(
            f"{name:<14} {o['precision']:<4} {o['ms']:>9.2f} {o['dispatches']:>5} {o['opencl_kernels']:>8} "
            f"{o['error_ratio']:>8.2g} {table_cell(r.get('opencl_fp32', {}).get('ms'), '.2f', 9)} "
            f"{table_cell(v.get('ms'), '.2f', 9)} {table_cell(v.get('error_ratio'), '.2g', 8)} "
            f"{r['onnxruntime']['ms']:>9.2f} {table_cell(r.get('ratio_ms_opencl_fp32'), '.2f', 6)} "
            f"{table_cell(r.get('ratio_ms_vulkan'), '.2f', 7)} {r['ratio_ms_onnxruntime']:>6.2f}")
    s = summary(results)
    lines.append(f"{'geomean':<14} {'':<4} {'':>9} {'':>5} {'':>8} {'':>8} {'':>9} {'':>9} {'':>8} {'':>9} "
                 f"{table_cell(s['geomean_ratio_ms_opencl_fp32'], '.2f', 6)} "
                 f"{table_cell(s['geomean_ratio_ms_vulkan'], '.2f', 7)} "
                 f"{table_cell(s['geomean_ratio_ms_onnxruntime'], '.2f', 6)}")
    return "\n".join(lines + failures)


def summary(results: dict) -> dict:
    """Geometric means of the ratios over the models where the peer ran."""
    document = {}
    for peer in ("opencl_fp32", "vulkan", "onnxruntime"):
        ratios = [r[f"ratio_ms_{peer}"] for r in results.values() if f"ratio_ms_{peer}" in r]
        document[f"geomean_ratio_ms_{peer}"] = geomean(ratios) if ratios else None
    return document


def write_json(path: str, results: dict, args, failures: dict):
    """The results, the models that failed (name -> why) and the summary, as JSON."""
    write_json_document(path, {"target": "opencl", "precision": args.precision,
                          "peers": ["vulkan (dnnf)", "onnxruntime (CPU)"], "models": results, "failed": failures,
                          "summary": summary(results)})


__all__ = ["bench_model", "progress_line", "summary", "table", "write_json"]
