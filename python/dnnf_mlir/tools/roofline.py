"""dnnf-roofline: show this machine's roofline (FMA and int8 peaks, STREAM triad bandwidth), measuring it once.

    dnnf-roofline              # the cached figures for this CPU, measured first if there are none
    dnnf-roofline --refresh    # measure again (a few seconds) and replace the cached figures
    dnnf-roofline --json
    dnnf-roofline --cpu x86-64-v3   # the peak of code built for a lower CPU (AVX2's 8 lanes)

The profiler (dnnf-run OUT --profile) and the kernel sweep (dnnf-bench --kernels)
judge each kernel against these figures. The cache is $DNNF_ROOFLINE, else
~/.cache/dnnf-mlir/roofline-2.json, one entry per CPU and CPU the code is for (the
profiler judges an artifact against the figures of the CPU it was compiled for).
"""

import argparse
import json
from dataclasses import asdict

from ..roofline import RooflineError, default_path, machine_roofline
from .common import ToolError, run_tool, tool_parser


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-roofline", __doc__)
    parser.add_argument("--refresh", action="store_true", help="measure again and replace the cached figures")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--cpu", metavar="NAME", help="the CPU the code is for (default: $DNNF_CPU or native)")
    return parser


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    try:
        roofline = machine_roofline(refresh=args.refresh, cpu=args.cpu)
    except RooflineError as error:
        raise ToolError(str(error)) from None
    print(json.dumps(asdict(roofline), indent=1) if args.json else f"{roofline.describe()}\n(cache: {default_path()})")
    return 0


def entry():
    run_tool("dnnf-roofline", main)


if __name__ == "__main__":
    entry()
