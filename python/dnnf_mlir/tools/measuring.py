"""What dnnf-profile and dnnf-tune share: their arguments (models, the host CPU, threads,
the profiling database, input shapes) and the checks before measuring anything."""

import argparse
from pathlib import Path

from ..codegen import Target, get_target
from .common import ToolError


def add_measuring_arguments(parser: argparse.ArgumentParser):
    parser.add_argument("models", nargs="+", metavar="MODEL", help="ONNX models")
    parser.add_argument("--cpu", metavar="NAME", help="host CPU the code is for (default: $DNNF_CPU or native)")
    parser.add_argument("--threads", type=int, default=1, help="threads the measured code runs on")
    parser.add_argument("--profile-db", metavar="FILE", help="the profiling database (default: $DNNF_PROFILE_DB or "
                        "~/.cache/dnnf-mlir/fusion-profile.sqlite3)")
    parser.add_argument("--shape", action="append", metavar="NAME=DIMS", help="static input shape, e.g. input_ids=1x128")


def measured_models(args: argparse.Namespace, verb: str) -> tuple:
    """``(paths, target)``: the models of ``args`` and the host target of its ``--cpu``;
    a ``ToolError`` for a missing model, a bad thread count, or a CPU this machine
    cannot run (nothing could be measured: ``verb`` it on a machine that can)."""
    paths = [Path(m) for m in args.models]
    for path in paths:
        if not path.is_file():
            raise ToolError(f"no such model: {path}")
    if args.threads < 1:
        raise ToolError(f"--threads must be at least 1, got {args.threads}")
    try:
        target: Target = get_target("host", args.cpu)
    except ValueError as error:
        raise ToolError(str(error)) from None
    if target.missing_features():
        raise ToolError(f"this machine cannot run code for {target.describe()}, which needs "
                        f"{', '.join(target.missing_features())}: {verb} it on a machine that has them")
    return paths, target


__all__ = ["add_measuring_arguments", "measured_models"]
