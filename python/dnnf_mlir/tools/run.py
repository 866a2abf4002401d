"""dnnf-run: run a model (ONNX or ECG MLIR, or compiled) and check it against onnxruntime.

``--interpret`` runs the reference interpreter on an ONNX or MLIR model;
``--rewrite`` runs the ecg-rewrite pass on it first (as dnnf-compile does) and
``--summary`` then shows the graph statistics before -> after. A
directory made by dnnf-compile runs its compiled code: a host or Vulkan library in
this process (Vulkan: on the device the runtime finds), an AArch64 one under
qemu-aarch64 through its C runner; ``--repeat N`` times N more runs (Vulkan: and
reports the GPU time of each dispatch of the last, from timestamp queries). ``--profile``
times every kernel launch of a host library compiled with ``dnnf-compile
--profile-kernels`` over those runs (10 by default) and prints them sorted by time,
each against this machine's roofline (``dnnf-roofline``); ``--profile-json FILE``
writes them as a Chrome trace, as onnxruntime's profiler does, ``--profile-svg FILE`` draws
them on the fusion plan (``kernel_profile/picture.py``). ``--check`` compares every output
with onnxruntime on the ONNX model (``--reference`` names it for an .mlir input)
and with the expected-output files shipped next to a model (``NAME_output_0.pb``),
element by element: |got - want| <= --atol + --rtol * |want| (defaults: float32
code summing in another order, see dnnf_mlir/checking.py; for an artifact compiled with
--precision fp16, the fp16 storage bound against onnxruntime float32 of
dnnf_mlir/half_tolerance.py, rtol 8u and atol 4u sqrt(K) RMS(want), u = 2^-11, K the
model's longest accumulation). The onnxruntime check is
against the model run in float64 (tools/float64_reference.py, computed once), the
tolerance widened to four times onnxruntime float32's own error against it where that is
larger, at the worst element and in RMS; without a float64 reference, against
onnxruntime float32. It prints the max absolute error, the worst element and how the
tolerance was derived, and the exit status is non-zero outside the tolerance.
Random float inputs are standard normal, scaled down (x0.25, x0.0625) while the
reference's output is degenerate (a saturated softmax); a reference that stays
degenerate (constant, all zero, not finite, saturated) is named in the output.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from ..context import make_context
from .._mlir import MLIRError, ir
from ..asm import parse, read_source
from ..checking import ATOL, RTOL, compare, informative_inputs, make_inputs
from ..half_tolerance import describe_half_tolerance, half_tolerance, longest_accumulation
from ..compiler import Artifact, ArtifactError
from ..ecg import TensorSpec, from_mlir
from ..frontend.onnx_importer import import_onnx, load_model
from ..interpreter import find_function, interpret
from ..fusion.picture import PictureError
from ..kernel_profile.picture import plan_of, profile_svg
from ..kernel_profile.report import ProfileError, launches_of, profile_runs
from ..roofline import RooflineError, machine_roofline
from ..rewriting.pass_ import rewrite_module
from ..statistics import compare_summary, function_statistics, rewrite_summary
from .common import ToolError, onnxruntime_session, parse_shape_overrides, print_diagnostic, run_tool
from .float64_reference import JudgedReference, judged_reference


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dnnf-run", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="MODEL.onnx (or .onnxtxt), MODEL.mlir, MODEL.mlirbc or a dnnf-compile OUTDIR")
    parser.add_argument("--interpret", action="store_true", help="run the reference interpreter (ONNX / MLIR input)")
    parser.add_argument("--check", action="store_true", help="compare with onnxruntime / expected outputs")
    parser.add_argument("--reference", help="the ONNX model an .mlir input came from")
    parser.add_argument("--input", action="append", metavar="NAME=FILE", help="input from .npy or .pb (default: random)")
    parser.add_argument("--shape", action="append", metavar="NAME=DIMS", help="static input shape for ONNX import")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--rtol", type=float, help=f"relative tolerance per element (default {RTOL:g}; fp16: 8u)")
    parser.add_argument("--atol", type=float, help=f"absolute tolerance per element (default {ATOL:g}; fp16: "
                        "4u sqrt(K) RMS(want))")
    parser.add_argument("--summary", action="store_true", help="print ops by mapping type, FLOPs, result bytes")
    parser.add_argument("--rewrite", action="store_true", help="interpret the graph after the ecg-rewrite pass")
    parser.add_argument("--repeat", type=int, default=0, help="compiled model: timed runs after the first")
    parser.add_argument("--threads", type=int, help="compiled model: threads to run on (OpenMP builds)")
    parser.add_argument("--profile", action="store_true",
                        help="compiled with --profile-kernels: time every kernel launch over the runs, against the roofline")
    parser.add_argument("--profile-json", metavar="FILE", help="with --profile: write the launches as a Chrome trace")
    parser.add_argument("--profile-svg", metavar="FILE",
                        help="with --profile: draw the fusion plan with each kernel's time, share and roofline fraction")
    return parser


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    path = Path(args.model)
    args.half_accumulation = None  # K of the fp16 bound, for an fp16 artifact checked with the default tolerance
    if args.rtol is None and args.atol is None and path.is_dir() and args.check:
        args.half_accumulation = _half_accumulation(path)
    args.rtol = RTOL if args.rtol is None else args.rtol
    args.atol = ATOL if args.atol is None else args.atol
    if path.is_dir():
        if args.rewrite:
            raise ToolError(f"{path}: --rewrite is for --interpret; dnnf-compile rewrites the graph (unless --no-rewrite)")
        return _run_compiled(path, args)
    if not args.interpret:
        raise ToolError(f"{path}: an ONNX or MLIR model runs with --interpret (compile it with dnnf-compile first)")

    shapes = parse_shape_overrides(args.shape)
    context = make_context()
    start = time.perf_counter()
    if path.suffix in (".onnx", ".onnxtxt"):
        onnx_path = path
        module = import_onnx(path, shapes=shapes, context=context)
    else:
        onnx_path = Path(args.reference) if args.reference else None
        try:
            module = parse(read_source(str(path)), context)
        except MLIRError as error:
            for diagnostic in error.error_diagnostics:
                print_diagnostic(diagnostic, str(path))
            return 1
    load_time = time.perf_counter() - start
    function = find_function(module)
    names = _input_names(function)
    specs = [from_mlir(a.type) for a in function.regions[0].blocks[0].arguments]
    if args.check and onnx_path is None:
        raise ToolError("--check on an .mlir input needs --reference MODEL.onnx")
    inputs, references = _inputs_and_references(names, specs, args, onnx_path)

    before = function_statistics(function) if args.summary else None
    if args.summary:
        print(f"{path.name}: loaded in {load_time:.2f} s")
    if args.rewrite:
        with context, ir.Location.unknown():
            report = rewrite_module(module)
        print(rewrite_summary(report["total"] | {"seconds": report["seconds"]}))
    if args.summary:
        after = function_statistics(function)
        print(compare_summary(before, after) if args.rewrite else after.summary())
    start = time.perf_counter()
    outputs = interpret(module, inputs)
    print(f"interpreted in {time.perf_counter() - start:.2f} s")
    return _report(outputs, references, args)


def _half_accumulation(path: Path) -> int | None:
    """For an artifact compiled with --precision fp16: its model's longest accumulation."""
    try:
        artifact = Artifact(path)
    except ArtifactError as error:
        raise ToolError(str(error)) from None
    if artifact.precision != "fp16":
        return None
    return longest_accumulation(load_model(Path(artifact.manifest["model"])))


def _run_compiled(path: Path, args) -> int:
    try:
        artifact = Artifact(path)
        onnx_path = Path(args.reference or artifact.manifest["model"])
        names = [name for name, _, _ in artifact.inputs]
        specs = [TensorSpec(shape, dtype) for _, dtype, shape in artifact.inputs]
        inputs, references = _inputs_and_references(names, specs, args, onnx_path)
        dispatches = device = None
        if args.profile or args.profile_json or args.profile_svg:
            return _profile_compiled(artifact, inputs, references, args)
        if artifact.is_host:
            session = artifact.session(args.threads)
            outputs, times = session.run_timed(inputs, args.repeat)
            dispatches, device = session.dispatch_times(), session.device
        else:
            outputs, times = artifact.run(inputs, repeat=args.repeat, threads=args.threads)
    except ArtifactError as error:
        raise ToolError(str(error)) from None
    how = "in this process" if artifact.is_host else "under " + artifact.emulator[0]
    if device:
        how += f" on {device}"
    timing = f": median {np.median(times):.2f} ms over {len(times)} runs" if times else ""
    print(f"ran {artifact.manifest['name']} for {artifact.target} {how}{timing}")
    if dispatches and times:
        print(_dispatch_summary(dispatches))
    return _report(outputs, references, args)


def _profile_compiled(artifact: Artifact, inputs, references, args) -> int:
    """``--profile``: the kernel table of ``--repeat`` runs (10 by default), the trace."""
    if not artifact.is_host:
        raise ToolError(f"--profile runs the library in this process; {artifact.target} code runs under an emulator")
    try:
        launches_of(artifact)
        plan = plan_of(artifact) if args.profile_svg else None
        roofline = machine_roofline(cpu=artifact.manifest["cpu"])  # an x86-64-v3 artifact: AVX2's peak
    except (ProfileError, RooflineError) as error:
        raise ToolError(str(error)) from None
    threads = args.threads or artifact.manifest["threads"]
    outputs, profile = profile_runs(artifact.session(args.threads), inputs, args.repeat or 10, threads)
    print(f"ran {artifact.manifest['name']} for {artifact.target} in this process, kernels timed: "
          f"median {1e3 * profile.run_seconds():.2f} ms over {len(profile.runs)} runs")
    print(f"roofline: {roofline.describe()}")
    print(profile.table(roofline))
    if args.profile_json:
        Path(args.profile_json).write_text(json.dumps(profile.chrome_trace(artifact.manifest["name"])) + "\n")
        print(f"Chrome trace: {args.profile_json}")
    if args.profile_svg:
        try:
            Path(args.profile_svg).write_bytes(profile_svg(plan, artifact.manifest["name"], profile, roofline))
        except PictureError as error:
            raise ToolError(str(error)) from None
        print(f"fusion plan with the kernel times: {args.profile_svg}")
    return _report(outputs, references, args)


def _dispatch_summary(dispatches: list, shown: int = 5) -> str:
    """The GPU time of the last run's dispatches: their total, and the longest kernels."""
    per_kernel = {}
    for name, ms in dispatches:
        per_kernel[name] = per_kernel.get(name, 0.0) + ms
    total = sum(per_kernel.values())
    longest = sorted(per_kernel.items(), key=lambda item: -item[1])[:shown]
    lines = [f"GPU time of the last run: {total:.2f} ms in {len(dispatches)} dispatches; longest kernels:"]
    lines += [f"  {ms:9.3f} ms {100 * ms / total if total else 0:5.1f}%  {name}" for name, ms in longest]
    return "\n".join(lines)


def _report(outputs, references: list, args) -> int:
    """With --check, compare with the references (exit status); else summarise the outputs."""
    if not args.check:
        for index, value in enumerate(outputs):
            print(f"output {index}: {value.dtype}{list(value.shape)} mean {np.mean(value):.6g}")
        return 0
    return 0 if _compare(outputs, references, args) else 1


def _input_names(function) -> list:
    arg_attrs = function.attributes["arg_attrs"] if "arg_attrs" in function.attributes else None
    count = len(function.regions[0].blocks[0].arguments)
    if arg_attrs is None:
        return [f"arg{i}" for i in range(count)]
    names = [ir_dict["onnx.name"] if "onnx.name" in ir_dict else None for ir_dict in arg_attrs]
    return [name.value if isinstance(name, ir.StringAttr) else f"arg{i}" for i, name in enumerate(names)]


def _expected_output_files(onnx_path) -> list:
    if onnx_path is None:
        return []
    return sorted(onnx_path.parent.glob(f"{onnx_path.stem}_output_*.pb"))


def _inputs_and_references(names, specs, args, onnx_path) -> tuple:
    """(inputs, [JudgedReference]): given inputs (--input), the rest from
    ``checking``: the dummy inputs of a model shipped with expected outputs, else random
    ones, informative ones when checking (onnxruntime's outputs not degenerate)."""
    given = {}
    for item in args.input or ():
        name, _, file = item.partition("=")
        given[name] = np.load(file) if file.endswith(".npy") else numpy_helper.to_array(onnx.load_tensor(file))
    unknown = set(given) - set(names)
    if unknown:
        raise ToolError(f"--input names no model input: {', '.join(sorted(unknown))}")
    expected_files = _expected_output_files(onnx_path)
    if not args.check:
        return make_inputs(names, specs, args.seed, given, bool(expected_files)), []
    session = onnxruntime_session(onnx_path)
    feed_names = {i.name for i in session.get_inputs()}

    def run_onnxruntime(inputs):
        try:
            return session.run(None, {name: value for name, value in zip(names, inputs) if name in feed_names})
        except Exception as error:  # noqa: BLE001 - onnxruntime raises its own untyped failures (indices out of range)
            raise ToolError(f"onnxruntime cannot run {onnx_path}: {str(error).splitlines()[0]}") from None

    inputs, want, scale = informative_inputs(names, specs, run_onnxruntime, args.seed, given, bool(expected_files))
    if scale is not None and scale != 1:
        print(f"random inputs scaled by {scale:g}: onnxruntime's outputs were degenerate on standard normal ones")
    feeds = {name: value for name, value in zip(names, inputs) if name in feed_names}
    if args.half_accumulation is not None:  # fp16 storage's error dwarfs float32's noise
        references = [JudgedReference("onnxruntime float32", list(want), [None] * len(want))]
    else:
        references = [judged_reference(load_model(onnx_path), feeds, want, args.rtol, args.atol)]
    if expected_files:
        outputs = [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in expected_files]
        references.append(JudgedReference("expected output files", outputs, [None] * len(outputs)))
    return inputs, references


def _compare(outputs, references: list, args) -> bool:
    ok = True
    for reference in references:
        if reference.note:
            print(f"{reference.note}: checking against onnxruntime float32")
        if len(reference.outputs) != len(outputs):
            print(f"FAIL vs {reference.name}: {len(outputs)} outputs, expected {len(reference.outputs)}")
            ok = False
            continue
        for index, (got, want, noise) in enumerate(zip(outputs, reference.outputs, reference.noises)):
            if args.half_accumulation is None:
                result, how = compare(got, want, args.rtol, args.atol, noise), ""
            else:
                result = compare(got, want, *half_tolerance(want, args.half_accumulation))
                how = f"; {describe_half_tolerance(want, args.half_accumulation)}"
            print(f"{'ok' if result.ok else 'FAIL'} output {index} vs {reference.name}: {result}{how}")
            ok &= result.ok
    return ok


def entry():
    run_tool("dnnf-run", main)


if __name__ == "__main__":
    entry()
