"""``compile_model``: an ONNX model to a deployable directory for a target.

The stages, each timed in the manifest:

1. ``import``: ONNX -> ECG (``frontend.onnx_importer``), the entry renamed ``ENTRY``;
2. ``rewrite``, ``fuse`` and ``lower``: the passes of ``lowering/compile.pipeline`` with
   this compilation's options (``compile_pipeline``; ``dnnf-opt
   --pass-pipeline-file=lowering/compile.pipeline`` runs the same): ``ecg-rewrite``
   (math-property rewriting that lowers the FLOPs; on unless ``rewrite=False``; what
   it did goes into the manifest's ``rewrite`` entry), ``ecg-fuse`` (within the
   target's fusion limits), ``ecg-outline-kernels`` (every kernel a function of its
   own; ``outline=False`` leaves the kernel boundaries to the code generator),
   ``convert-ecg-to-linalg``, ``dnnf-int8-matmuls`` (CPUs with AVX512-VNNI: byte matmuls and
   convolutions by constant byte weights with vpdpbusd, before the passes that would take
   their f32 forms), ``dnnf-winograd`` (CPU targets: 3x3 convolutions by
   Winograd F(4x4, 3x3), their filters transformed; ``winograd``), ``dnnf-channel-panels``
   (CPU targets: convolutions over few positions as ``X_col^T W^T``, the filters cut into panels),
   ``dnnf-weight-panels`` (CPU targets: matmuls with constant weights read them as panels cut at compile time),
   ``dnnf-externalize-weights`` (the weights moved out of the code into
   ``weights.bin``), then the lowering pass of the target's backend
   (``Backend.lowering_pass``; the file names the CPU's, ``dnnf-lower-to-llvm``:
   tiled, packed and vectorized kernels in the LLVM dialect);
3. the artifact writer of the target's kind (``WRITERS``, ``artifact_writer.py``)
   makes the rest of the directory behind the C interface of ``c_glue.py``; the CPU's
   (``cpu_library.py``): ``llvm``, the LLVM IR through ``opt-22 -O3`` and ``llc-22``
   into ``model.o``, and ``build``, CMake (with the AArch64 toolchain file when
   cross-compiling) linking ``model.o`` and the generated C glue into
   ``libdnnf_model.so`` and building ``dnnf_runner``; Vulkan's (``vulkan_library.py``):
   ``plan``, the dispatch plan and the SPIR-V kernels, and ``build``, CMake building
   the glue (plan and kernels compiled in) with the Vulkan runtime.

The output directory holds everything needed to rebuild and run the model on the
target (see ``artifact.py`` for running it); for a CPU::

    manifest.json   what was compiled, how, the tensors, the times
    model.h         the C entry points and the tensors they take
    model.c         the glue (generated)     model.o   the generated code
    weights.bin     the weights, mapped at load time
    CMakeLists.txt  aarch64-linux-gnu.cmake  dnnf_runner.c
    libdnnf_model.so  dnnf_runner            built for the target

for Vulkan, ``plan.txt`` and ``kernels/*.spv`` (what ``model.c`` holds) and the
runtime's ``dnnf_vulkan.c`` / ``dnnf_vulkan.h`` instead of ``model.o``.

The directory is built under a temporary name next to ``outdir`` and renamed at
the end: a failed compilation leaves nothing behind. Each stage, and each pass of
the pipeline within it, is logged as it starts on the ``dnnf_mlir.compiler`` logger
(``dnnf_mlir.progress``): the tools draw a progress display from it, nothing prints.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..context import make_context
from .._mlir import MLIRError, ir
from ..asm import write_module
from ..codegen.lowered_module import lowered_kernels
from ..ecg import from_mlir
from ..frontend.onnx_importer import import_onnx
from ..fusion import fusion_summary
from ..fusion.plan_graph import FUSION_PLAN
from ..kernel_functions import kernel_counts
from ..lowering import read_pipeline
from ..progress import StageTimer
from ..rewriting.rules import FAMILIES
from ..statistics import module_statistics, rewrite_summary
from ..transforms.pipeline import Pipeline, build_pass_manager
from .c_glue import ModelInterface
from .cpu_library import CPU_LIBRARY
from .errors import CompileError
from .index_checks import index_checks
from .options import CompileOptions
from .opencl_library import OPENCL_LIBRARY
from .vulkan_library import VULKAN_LIBRARY
from .weights import read_header, recorded_layout

IMPORTED_ENTRY = "main"  # the function import_onnx makes
# The compiled entry point; not `main`, which a program linking the library defines.
ENTRY = "dnnf_entry"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 2  # 2: the artifact writer's entries, "emulator" among them
WEIGHTS = "weights.bin"
COMPILE_PIPELINE = "compile.pipeline"  # in lowering/
# The pass compile.pipeline lowers with (the CPU's); another target's backend puts its own there.
PIPELINE_LOWERING_PASS = "dnnf-lower-to-llvm"
ECG_IR, LLVM_IR = "model.ecg.mlir", "model.llvm.mlir"  # written with keep_ir
# The passes' reports, in the staging directory.
REWRITE_STATS, FUSION_STATS, WINOGRAD_STATS = ".rewrite.json", ".fusion.json", ".winograd.json"
# Any other pass: "lower". The GPU targets unroll recurrences right after rewriting, before fusion.
STAGE_OF_PASS = {"ecg-rewrite": "rewrite", "ecg-unroll-recurrence": "rewrite", "ecg-split-top-k": "rewrite",
                 "ecg-flatten-concats": "rewrite", "ecg-fuse": "fuse"}
WRITERS = {writer.kind: writer for writer in (CPU_LIBRARY, VULKAN_LIBRARY, OPENCL_LIBRARY)}  # Target.kind -> its ArtifactWriter
logger = logging.getLogger("dnnf_mlir.compiler")


@dataclass
class CompileReport:
    outdir: Path
    manifest: dict  # what manifest.json holds

    def summary(self) -> str:
        m = self.manifest
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in m["compile_seconds"].items() if k != "total")
        weight_mb = sum(w["nbytes"] for w in m["weights"]) / 2**20
        if "cpu" in m:
            runs = f"{m['cpu']}, {m['threads']} thread{'s' if m['threads'] > 1 else ''}"
        else:
            code = f"{m['spirv_kernels']} SPIR-V" if "spirv_kernels" in m else f"{m['opencl_kernels']} OpenCL C"
            runs = f"device profile {m['device']}, {m['dispatches']} dispatches of {code} kernels"
        return (
            f"{m['name']}: {m['kernels']} kernels ({m['unique_kernels']} distinct) for {m['target']} ({runs}), "
            f"{len(m['weights'])} weight arrays ({weight_mb:.1f} MiB); "
            f"compiled in {m['compile_seconds']['total']:.1f} s ({stages}) -> {self.outdir}\n"
            f"{rewrite_summary(m['rewrite'])}\n"
            f"{fusion_summary(m['fusion'])}" + _winograd_summary(m.get("winograd"))
        )


def _winograd_summary(report) -> str:
    """The line on what dnnf-winograd did (none when it did not run)."""
    if not report:
        return ""
    by = report["decided_by"]
    return (f"\ndnnf-winograd: {report['winograd']} convolutions by Winograd F(4x4, 3x3); mode auto decided "
            f"{by['measurement']} by measurements (dnnf-tune), {by['rule']} by the cost model")


def _pop_json(path: Path):
    """The JSON a pass wrote to ``path``, the file removed; None when it wrote none."""
    if not path.exists():
        return None
    report = json.loads(path.read_text())
    path.unlink()
    return report


def _unrewritten(module) -> dict:
    """The manifest's ``rewrite`` entry when ecg-rewrite is off: the graph as imported."""
    stats = module_statistics(module).values()
    ops, flops = sum(s.ops for s in stats), sum(s.flops for s in stats)
    return {"enabled": False, "ops_before": ops, "ops_after": ops, "flops_before": flops, "flops_after": flops,
            "rules_applied": dict.fromkeys(FAMILIES, 0), "rules": {}, "seconds": 0.0}


def compile_pipeline(options: CompileOptions, weights_file, stats_dir, fusion_svg=None) -> Pipeline:
    """``lowering/compile.pipeline`` with the options of one compilation set; the
    statistics of ecg-rewrite and ecg-fuse go to ``stats_dir``, ecg-fuse's picture of
    its plan to ``fusion_svg``."""
    t = options.resolve_target()
    lowering = t.backend.lowering_pass
    pipeline = Pipeline(read_pipeline(COMPILE_PIPELINE)).replaced(PIPELINE_LOWERING_PASS, lowering)
    if not options.outline:
        pipeline = pipeline.without("ecg-outline-kernels")
    pipeline = pipeline.with_options(lowering, target=t.name, **t.options(), threads=options.threads)
    pipeline = pipeline.with_options("dnnf-externalize-weights", weights_file=weights_file)
    pipeline = pipeline.with_options(
        "ecg-fuse", mode=options.fusion, profile=str(options.profile).lower(), target=t.name, **t.options(),
        stats_file=Path(stats_dir) / FUSION_STATS,
    )
    if options.profile_kernels:  # the plan stays in the artifact, for dnnf-run --profile-svg
        pipeline = _with_kernel_timers(pipeline, options, lowering).with_options(
            "ecg-fuse", plan_file=Path(stats_dir) / FUSION_PLAN)
    if options.precision == "fp16":
        pipeline = pipeline.inserted_after("convert-ecg-to-linalg", "dnnf-gpu-fp16-storage")
    layout = t.default_layout if options.gpu_layout == "auto" else options.gpu_layout
    if layout == "nc4hw4":
        if t.backend.kind == "cpu":
            raise CompileError(f"--gpu-layout nc4hw4 is for the GPU targets; target {options.target} is a CPU")
        pipeline = pipeline.inserted_after("convert-ecg-to-linalg", "dnnf-gpu-channel-blocks")
    if t.backend.kind == "cpu" and options.winograd != "off":
        pipeline = pipeline.with_options("dnnf-winograd", mode=options.winograd, threads=options.threads,
                                         target=t.name, **t.options(), stats_file=Path(stats_dir) / WINOGRAD_STATS)
    else:
        pipeline = pipeline.without("dnnf-winograd")
    if t.backend.kind != "cpu":
        # The GPU kernels flatten nested concatenations themselves (``gpu/concats``); the
        # chains of their own this makes would double DenseNet's dispatches on lavapipe.
        pipeline = pipeline.without("ecg-flatten-concats")
    for panels in ("dnnf-channel-panels", "dnnf-int8-matmuls", "dnnf-weight-panels"):
        if t.backend.kind == "cpu":
            pipeline = pipeline.with_options(panels, target=t.name, **t.options())
        else:
            pipeline = pipeline.without(panels)
    if t.backend.kind == "cpu":  # the threads share its panels
        pipeline = pipeline.with_options("dnnf-channel-panels", threads=options.threads)
    if not t.backend.runs_step_loops:
        pipeline = pipeline.inserted_after("ecg-rewrite", "ecg-unroll-recurrence")
    budget = getattr(getattr(t, "device", None), "max_loop_iterations", None)
    if budget is not None:  # a GPU whose threads stop their loops past a budget (lavapipe)
        pipeline = pipeline.inserted_after("ecg-rewrite", "ecg-split-top-k").with_options(
            "ecg-split-top-k", max_iterations=budget)
    if fusion_svg is not None:
        pipeline = pipeline.with_options("ecg-fuse", svg_file=Path(fusion_svg).resolve())
    if not options.rewrite:
        return pipeline.without("ecg-rewrite").without("ecg-flatten-concats")  # the graph as imported
    return pipeline.with_options("ecg-rewrite", stats_file=Path(stats_dir) / REWRITE_STATS)


def _with_kernel_timers(pipeline: Pipeline, options: CompileOptions, lowering: str) -> Pipeline:
    """``pipeline`` with the kernel profiler's passes: the statistics of each kernel
    while it is ECG, the timers once it is LLVM (CPU targets, kernels outlined)."""
    if lowering != PIPELINE_LOWERING_PASS:
        raise CompileError(f"--profile-kernels times CPU kernels; target {options.target} is not a CPU")
    if not options.outline:
        raise CompileError("--profile-kernels times kernel functions; it needs ecg-outline-kernels (not --no-outline)")
    return pipeline.inserted_after("ecg-outline-kernels", "dnnf-kernel-statistics").inserted_after(
        lowering, "dnnf-instrument-kernels")


def _pass_detail(name: str, module, lowering: str) -> str:
    """What a pass's progress event says: its name, and for the code generator (the
    pass ``lowering``) the kernels it lowers."""
    if name != lowering:
        return name
    launched, unique = kernel_counts(module.operation)
    if not unique:
        return f"{name}: kernels drawn by the code generator"
    return f"{name}: {unique} kernels ({launched} launched per run)"


def _run_pipeline(module, pipeline: Pipeline, timer: StageTimer, lowering: str):
    """Run ``pipeline`` pass by pass, each in its stage of ``timer`` (``STAGE_OF_PASS``).
    A failing pass is a ``CompileError`` with its diagnostics."""
    for name, element in zip(pipeline.names(), pipeline.element_texts()):
        timer.enter(STAGE_OF_PASS.get(name, "lower"), _pass_detail(name, module, lowering))
        try:
            build_pass_manager(f"builtin.module({element})", module.context).run(module.operation)
        except MLIRError as error:
            messages = "; ".join(d.message for d in error.error_diagnostics) or error.message
            raise CompileError(messages) from None


def _tensor_names(function, attribute_name: str, count: int, prefix: str) -> list:
    if attribute_name not in function.attributes:
        return [f"{prefix}{i}" for i in range(count)]
    names = []
    for i, attrs in enumerate(ir.ArrayAttr(function.attributes[attribute_name])):
        entries = ir.DictAttr(attrs)
        names.append(ir.StringAttr(entries["onnx.name"]).value if "onnx.name" in entries else f"{prefix}{i}")
    return names


def _entry_signature(module: ir.Module):
    """Rename the imported function to ``ENTRY``; (name, dtype, shape) of its inputs and
    outputs, and the ``IndexCheck``s of its inputs."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == IMPORTED_ENTRY:
            op.attributes["sym_name"] = ir.StringAttr.get(ENTRY)
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            specs_in = [from_mlir(t) for t in ftype.inputs]
            specs_out = [from_mlir(t) for t in ftype.results]
            names_in = _tensor_names(op, "arg_attrs", len(specs_in), "input")
            names_out = _tensor_names(op, "res_attrs", len(specs_out), "output")
            inputs = [(n, s.dtype, tuple(s.shape)) for n, s in zip(names_in, specs_in)]
            outputs = [(n, s.dtype, tuple(s.shape)) for n, s in zip(names_out, specs_out)]
            return inputs, outputs, index_checks(op)
    raise CompileError(f"the model has no @{IMPORTED_ENTRY} function")


def _tensor_json(tensors) -> list:
    return [{"name": n, "dtype": np.dtype(d).name, "shape": list(s)} for n, d, s in tensors]


def compile_model(
    model: "str | os.PathLike",
    outdir: "str | os.PathLike",
    *,
    options: CompileOptions | None = None,
    shapes: dict | None = None,
    keep_ir: bool = False,
    fusion_stats: "str | os.PathLike | None" = None,
    fusion_svg: "str | os.PathLike | None" = None,
    **option_fields,
) -> CompileReport:
    """Compile the ONNX ``model`` into ``outdir`` (replaced if it exists).

    ``options`` (a ``CompileOptions``; default: its defaults) with ``option_fields``
    (any of its fields: ``target="aarch64"``, ``cpu``, ``threads``, ``rewrite``,
    ``fusion``, ``profile``, ``outline``) say what is compiled and how: for the
    ``target`` and its ``cpu`` (``native``, ``x86-64-v3``, ``cortex-a76``, ...; default:
    ``$DNNF_CPU``, else native for the host and generic for AArch64; the library
    refuses to load on a CPU without its features); ``threads`` > 1 splits the parallel
    loops among that many OpenMP threads (host only: no OpenMP runtime for other
    targets is installed; how many run is OpenMP's choice at run time,
    ``dnnf_set_num_threads``, ``OMP_NUM_THREADS``); ``rewrite`` runs the
    ``ecg-rewrite`` pass on the imported graph first; ``fusion`` is ecg-fuse's planner:
    ``dnnf`` (mapping types, Table 3), ``tvm`` (TVM's fixed patterns) or ``none`` (one
    kernel per op); ``profile`` lets it decide Table 3's Y cells by measuring them on
    this machine (the profiling database; off: the deterministic conservative
    decisions); ``outline=False`` leaves out ``ecg-outline-kernels``: the code
    generator then draws the kernel boundaries itself (merging element-wise chains,
    epilogues), as before kernels were functions.

    ``shapes`` fixes input shapes (name -> dims). ``keep_ir`` also writes the module
    that ``lowering/compile.pipeline`` starts from (``model.ecg.mlir``) and the one it
    ends with (``model.llvm.mlir``). ecg-fuse's report goes into the manifest's
    ``fusion`` entry and, whole, to ``fusion_stats``; ``fusion_svg`` gets a picture of
    the plan (SVG, Graphviz).
    """
    options = replace(options or CompileOptions(), **option_fields)
    t = options.resolve_target()
    if options.threads > 1 and not t.runs_here:
        raise CompileError(f"--threads {options.threads}: only host libraries run on several threads")
    writer = WRITERS[t.kind]
    model, outdir = Path(model), Path(outdir)
    timer = StageTimer(logger)
    timer.enter("import", str(model))
    module = import_onnx(model, shapes=shapes, context=make_context())

    outdir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", dir=outdir.parent))
    try:
        with module.context, ir.Location.unknown():
            inputs, outputs, checks = _entry_signature(module)
            if keep_ir:
                write_module(module, str(staging / ECG_IR))
            rewritten = None if options.rewrite else _unrewritten(module)
            pipeline = compile_pipeline(options, staging / WEIGHTS, staging, fusion_svg)
            _run_pipeline(module, pipeline, timer, t.backend.lowering_pass)
            if options.rewrite:
                report = json.loads((staging / REWRITE_STATS).read_text())
                (staging / REWRITE_STATS).unlink()
                rewritten = {"enabled": True, **report["total"], "seconds": report["seconds"]}
            fusion_report = json.loads((staging / FUSION_STATS).read_text())
            if fusion_stats is not None:
                shutil.copyfile(staging / FUSION_STATS, fusion_stats)
            (staging / FUSION_STATS).unlink()
            winograd = _pop_json(staging / WINOGRAD_STATS)
            kernels, unique_kernels = lowered_kernels(module)
            layout = recorded_layout(module)
            if keep_ir:
                write_module(module, str(staging / LLVM_IR))
        interface = ModelInterface(model.stem, inputs, outputs, layout, read_header(staging / WEIGHTS), checks)
        artifact = writer.write(module, staging, interface, ENTRY, t, timer)
        timer.finish()
        times = dict(timer.times, total=sum(timer.times.values()))
        manifest = {
            "format": MANIFEST_FORMAT,
            "name": model.stem,
            "model": str(model.resolve()),
            "shapes": {k: list(v) for k, v in (shapes or {}).items()},
            "target": t.name,
            "precision": options.precision,
            **artifact,
            "threads": options.threads,
            "entry": ENTRY,
            "inputs": _tensor_json(inputs),
            "outputs": _tensor_json(outputs),
            "weights": [dict(w.to_json(), nbytes=w.nbytes) for w in layout],
            "index_checks": [check.to_json() for check in checks],
            "kernels": kernels,  # launched per run
            "unique_kernels": unique_kernels,
            "outline": options.outline,
            "rewrite": rewritten,
            "fusion": {key: value for key, value in fusion_report.items() if key != "functions"},
            "winograd": winograd,
            "compile_seconds": {k: round(v, 3) for k, v in times.items()},
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        if outdir.exists():
            shutil.rmtree(outdir)
        staging.rename(outdir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return CompileReport(outdir, manifest)


__all__ = ["CompileError", "CompileReport", "ECG_IR", "ENTRY", "LLVM_IR", "MANIFEST", "MANIFEST_FORMAT", "WRITERS",
           "compile_model"]
