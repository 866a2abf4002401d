"""dnnf-compile: compile an ONNX model for the host, AArch64, Vulkan or OpenCL.

    dnnf-compile model.onnx --target host -o out/model          # libdnnf_model.so, dnnf_runner
    dnnf-compile model.onnx --target aarch64 -o out/model-arm   # built with the AArch64 toolchain
    dnnf-compile model.onnx --cpu x86-64-v3 -o out/model-avx2   # runs on any AVX2 + FMA machine
    dnnf-compile model.onnx --target vulkan -o out/model-vk     # SPIR-V kernels, a C runtime over libvulkan
    dnnf-compile model.onnx --target opencl -o out/model-cl     # OpenCL C kernels, a C runtime over the ICD
    dnnf-run out/model --check                                  # run it, compare with onnxruntime

The imported graph goes through the passes of lowering/compile.pipeline: ecg-rewrite
(math-property rewriting that lowers the FLOPs) and ecg-flatten-concats (a concat of a
concat that others read reads the pieces instead; --no-rewrite skips both), then ecg-fuse
(the fusion plan: which ops make one kernel; --fusion picks the planner; Table 3's
yellow cells are decided conservatively unless --profile), then the lowering. The
second and third lines printed say what rewriting and fusion did; manifest.json's
"rewrite" and "fusion" entries have the details. The stages show on stderr as they go:
a live display on a terminal, a line each otherwise (--quiet: only errors, no summary
either).

OUTDIR receives the library, its C header (model.h), the weights file, the CMake
project that built them and manifest.json (see dnnf_mlir.compiler.driver; a GPU
target's library is its C runtime, with the kernels beside it). It is replaced only
when the compilation succeeds.

The compile cache ($DNNF_CACHE_DIR or ~/.cache/dnnf-mlir/compiled; see dnnf-cache)
keeps what was compiled: the same model, shapes, options, CPU and compiler again
copy its entry to OUTDIR instead of compiling, and say so. --keep-ir, --fusion-stats
and --fusion-svg describe a compilation as it runs, so they compile afresh (and
keep the result). --no-cache neither reads nor fills the cache.
"""

import argparse
from pathlib import Path

from ..cache import CompileCache, compile_cached, copy_entry, store_compiled
from ..codegen import CodegenError
from ..compiler import Artifact, CompileError, CompileOptions, CompileReport, compile_model
from ..compiler.options import add_option_arguments, from_arguments
from ..conversion import ConversionError
from ..session import ModelSource
from .common import ToolError, parse_shape_overrides, run_tool, tool_parser
from .progress_display import progress_display


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-compile", __doc__)
    parser.add_argument("model", help="MODEL.onnx (or .onnxtxt)")
    parser.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="directory to write")
    add_option_arguments(parser)
    parser.add_argument("--shape", action="append", metavar="NAME=DIMS", help="static input shape, e.g. input_ids=1x128")
    parser.add_argument("--fusion-stats", metavar="FILE", help="write ecg-fuse's report (JSON) to FILE")
    parser.add_argument("--fusion-svg", metavar="FILE",
                        help="draw the fusion plan in FILE (SVG: one box per kernel, labelled with its mapping type)")
    parser.add_argument(
        "--keep-ir", action="store_true",
        help="also write model.ecg.mlir and model.llvm.mlir: what lowering/compile.pipeline starts from and ends with",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors (no progress, no summary)")
    parser.add_argument("--no-cache", action="store_true", help="compile afresh and leave the compile cache alone")
    return parser


def compile_through_cache(args, options: CompileOptions, shapes: dict) -> str:
    """Compile into the cache, or take the cache's entry; copy it to OUTDIR; the summary."""
    cache = CompileCache()
    source = ModelSource(args.model, cache)
    static = source.info.static_shapes(shapes)
    outdir = Path(args.output)
    if static is None:  # symbolic or unknown shapes: compile_model says what is missing
        return compile_fresh(args, options, shapes).summary()
    if args.keep_ir or args.fusion_stats or args.fusion_svg:
        report = compile_fresh(args, options, shapes)
        store_compiled(outdir, source.digest, static, options, cache, source.name)
        return report.summary()

    def install(entry: Path) -> CompileReport:
        copy_entry(entry, outdir)
        return CompileReport(outdir, Artifact(outdir).manifest)

    report, compiled = compile_cached(source.path, source.digest, static, options, cache, install, source.name)
    if compiled:
        return report.summary()
    return report.summary() + f"\n(from the compile cache {cache.root}; --no-cache compiles afresh)"


def compile_fresh(args, options: CompileOptions, shapes: dict):
    return compile_model(args.model, args.output, options=options, shapes=shapes, keep_ir=args.keep_ir,
                         fusion_stats=args.fusion_stats, fusion_svg=args.fusion_svg)


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    shapes = parse_shape_overrides(args.shape)
    try:
        options = from_arguments(args)
        with progress_display("dnnf-compile", args.quiet):
            if args.no_cache:
                summary = compile_fresh(args, options, shapes).summary()
            else:
                summary = compile_through_cache(args, options, shapes)
    except (CompileError, CodegenError, ConversionError, ValueError) as error:
        raise ToolError(str(error)) from None
    if not args.quiet:
        print(summary)
    return 0


def entry():
    run_tool("dnnf-compile", main)


if __name__ == "__main__":
    entry()
