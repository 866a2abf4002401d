"""dnnf-tune: measure Winograd against the direct convolution, layer by layer, on this CPU.

    dnnf-tune vgg19.onnx resnet50.onnx
    dnnf-tune model.onnx --threads 2 --profile-db /tmp/profile.sqlite3

Each model is imported, rewritten and fused as dnnf-compile does; every kernel holding
a 3x3 stride-1 convolution that dnnf-winograd can rewrite is compiled alone (with its
bias, ReLU or residual add as in the model) directly and by Winograd F(4x4, 3x3), for
this CPU (--cpu: one it can run) and --threads, and both timed in alternating rounds
(winograd_tuning.py). The times go to the profiling database ($DNNF_PROFILE_DB, else
~/.cache/dnnf-mlir/fusion-profile.sqlite3); what it holds already is not measured
again. From then on dnnf-compile's --winograd auto (the default) takes the faster
scheme for these convolutions on this CPU and thread count, and its cost model for the
others. The summary gives per convolution the two times, the choice and whether the
cost model would have chosen the same.
"""

import argparse
from pathlib import Path

from tqdm import tqdm

from ..context import make_context
from ..frontend.onnx_importer import import_onnx
from ..fusion import fuse_module
from ..fusion.profile_db import ProfileDatabase
from ..rewriting import rewrite_module
from ..winograd_tuning import measure_schemes, tuning_cases
from .common import parse_shape_overrides, run_tool, tool_parser
from .measuring import add_measuring_arguments, measured_models


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-tune", __doc__)
    add_measuring_arguments(parser)
    return parser


def model_cases(path: Path, target, threads: int, shapes: dict) -> list:
    """The ``TuningCase`` of each Winograd-eligible convolution of the model ``path``."""
    module = import_onnx(path, shapes=shapes, context=make_context())
    with module.context:
        rewrite_module(module)
        fuse_module(module, "dnnf", target=target)
        return tuning_cases(module, target, threads)


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    paths, target = measured_models(args, "tune")
    shapes = parse_shape_overrides(args.shape)
    cases = {}
    for path in tqdm(paths, desc="models", unit=" model", disable=len(paths) < 2):
        for case in model_cases(path, target, args.threads, shapes):
            if case.key in cases:
                cases[case.key].layers += 1
            else:
                cases[case.key] = case
    database = ProfileDatabase(args.profile_db)
    timings, measured = {}, 0
    for key, case in tqdm(cases.items(), desc="convolutions", unit=" conv"):
        timings[key] = database.lookup_scheme(key)
        if timings[key] is None:
            timings[key] = database.store_scheme(key, measure_schemes(case, target.cpu, args.threads))
            measured += 1
    print(f"profiling database {database.path}: {len(cases)} convolutions ({measured} measured now), "
          f"CPU {target.cpu_name}, {args.threads} thread{'s' if args.threads > 1 else ''}")
    header = f"{'channels, output':<24} {'layers':>6} {'direct us':>10} {'Winograd us':>11} {'choice':>8} {'rule':>10}"
    print(header)
    print("-" * len(header))
    for key, case in cases.items():
        t = timings[key]
        agrees = "agrees" if case.rule == t.winograd else "disagrees"
        print(f"{case.describe():<24} {case.layers:>6} {t.direct_us:>10.1f} {t.winograd_us:>11.1f} "
              f"{'Winograd' if t.winograd else 'direct':>8} {agrees:>10}")
    database.close()
    return 0


def entry():
    run_tool("dnnf-tune", main)


if __name__ == "__main__":
    entry()
