"""dnnf-compile: compile an ONNX model into a shared library for the host or AArch64.

    dnnf-compile model.onnx --target host -o out/model          # libdnnf_model.so, dnnf_runner
    dnnf-compile model.onnx --target aarch64 -o out/model-arm   # built with the AArch64 toolchain
    dnnf-compile model.onnx --cpu x86-64-v3 -o out/model-avx2   # runs on any AVX2 + FMA machine
    dnnf-run out/model --check                                  # run it, compare with onnxruntime

The imported graph goes through the passes of lowering/compile.pipeline: ecg-rewrite
(math-property rewriting that lowers the FLOPs; --no-rewrite skips it), then ecg-fuse
(the fusion plan: which ops make one kernel; --fusion picks the planner), then the
lowering. The second and third lines printed say what rewriting and fusion did;
manifest.json's "rewrite" and "fusion" entries have the details. The stages show on
stderr as they go: a live display on a terminal, a line each otherwise (--quiet: only
errors, no summary either).

OUTDIR receives the library, its C header (model.h), the weights file, the CMake
project that built them and manifest.json (see dnnf_mlir.compiler.driver). It is
replaced only when the compilation succeeds.
"""

import argparse

from ..codegen import CodegenError
from ..compiler import CompileError, compile_model
from ..conversion import ConversionError
from ..fusion import MODES
from .common import ToolError, parse_shape_overrides, run_tool, tool_parser
from .progress_display import progress_display


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-compile", __doc__)
    parser.add_argument("model", help="MODEL.onnx (or .onnxtxt)")
    parser.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="directory to write")
    parser.add_argument("--target", default="host", help="host (default) or aarch64")
    parser.add_argument(
        "--cpu", metavar="NAME",
        help="CPU to compile for, as LLVM names it: native (this machine; the host default, or $DNNF_CPU), "
             "x86-64-v3, znver3, skylake-avx512, cortex-a76, ... (AArch64 default: generic). "
             "The library refuses to load on a CPU without its features",
    )
    parser.add_argument("--threads", type=int, default=1, help="OpenMP threads of the parallel loops (host only)")
    parser.add_argument("--shape", action="append", metavar="NAME=DIMS", help="static input shape, e.g. input_ids=1x128")
    parser.add_argument("--no-rewrite", action="store_true", help="compile the imported graph as is (no ecg-rewrite)")
    parser.add_argument(
        "--fusion", choices=MODES, default="dnnf",
        help="ecg-fuse's planner: dnnf (mapping types, the paper's Table 3; default), tvm (TVM's fixed patterns) "
             "or none (one kernel per op)",
    )
    parser.add_argument(
        "--no-profile", action="store_true",
        help="decide Table 3's yellow cells conservatively (deterministic) instead of by the latencies measured "
             "on this machine and kept in the profiling database ($DNNF_PROFILE_DB)",
    )
    parser.add_argument("--fusion-stats", metavar="FILE", help="write ecg-fuse's report (JSON) to FILE")
    parser.add_argument("--fusion-svg", metavar="FILE",
                        help="draw the fusion plan in FILE (SVG: one box per kernel, labelled with its mapping type)")
    parser.add_argument(
        "--no-outline", action="store_true",
        help="no ecg-outline-kernels: the code generator draws the kernel boundaries (the pipeline before kernel functions)",
    )
    parser.add_argument(
        "--keep-ir", action="store_true",
        help="also write model.ecg.mlir and model.llvm.mlir: what lowering/compile.pipeline starts from and ends with",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors (no progress, no summary)")
    return parser


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    try:
        with progress_display("dnnf-compile", args.quiet):
            report = compile_model(
                args.model, args.output, target=args.target, cpu=args.cpu, threads=args.threads,
                shapes=parse_shape_overrides(args.shape), rewrite=not args.no_rewrite, keep_ir=args.keep_ir,
                outline=not args.no_outline, fusion=args.fusion, profile=not args.no_profile,
                fusion_stats=args.fusion_stats, fusion_svg=args.fusion_svg,
            )
    except (CompileError, CodegenError, ConversionError, ValueError) as error:
        raise ToolError(str(error)) from None
    if not args.quiet:
        print(report.summary())
    return 0


def entry():
    run_tool("dnnf-compile", main)


if __name__ == "__main__":
    entry()
