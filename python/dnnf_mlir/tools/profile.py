"""dnnf-profile: fill the profiling database with the fusion candidates of models.

    dnnf-profile resnet50.onnx bert_base.onnx
    dnnf-profile model.onnx --cpu x86-64-v3 --profile-db /tmp/profile.sqlite3

Each model is imported and rewritten as dnnf-compile does, then planned by ecg-fuse
(mode dnnf) with the profiling oracle: every Table 3 yellow cell the planner meets
(legal, profit unknown) is looked up in the database ($DNNF_PROFILE_DB, else
~/.cache/dnnf-mlir/fusion-profile.sqlite3) and, when missing, compiled and timed on
this machine -- latency(block + op) against latency(block) + latency(op) -- and
stored. Later compiles for the same CPU then find every answer. A progress bar counts
the candidates; the summary gives per model the hits, misses (measured) and
decisions. A ``--cpu`` with features this machine lacks is refused: nothing could be
measured (dnnf-compile for it uses what the database holds, from a machine that has them).
"""

import argparse
from pathlib import Path

from tqdm import tqdm

from ..context import make_context
from ..frontend.onnx_importer import import_onnx
from ..fusion import fuse_module
from ..fusion.profile_db import ProfileDatabase
from ..fusion.profiling import ProfilingOracle
from ..rewriting import rewrite_module
from .common import parse_shape_overrides, run_tool, tool_parser
from .measuring import add_measuring_arguments, measured_models


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-profile", __doc__)
    add_measuring_arguments(parser)
    parser.add_argument("--no-rewrite", action="store_true", help="plan the imported graph as is (no ecg-rewrite)")
    return parser


class _Counted:
    """An oracle that moves a progress bar at each decision."""

    def __init__(self, oracle: ProfilingOracle, bar):
        self.oracle, self.bar = oracle, bar

    def decide(self, block_ops, op, cell) -> bool:
        fused = self.oracle.decide(block_ops, op, cell)
        database = self.oracle.database
        self.bar.update(1)
        self.bar.set_postfix(hits=database.hits, measured=self.oracle.measured)
        return fused


def profile_model(path: Path, oracle: ProfilingOracle, shapes: dict, rewrite: bool) -> dict:
    """Plan ``path`` with ``oracle``; what the database answered for it."""
    database = oracle.database
    before = (database.hits, database.misses, dict(oracle.decisions))
    module = import_onnx(path, shapes=shapes, context=make_context())
    with module.context:
        if rewrite:
            rewrite_module(module)
        with tqdm(desc=f"{path.stem}: yellow cells", unit=" cells", leave=False) as bar:
            fuse_module(module, "dnnf", _Counted(oracle, bar))
    return {
        "hits": database.hits - before[0],
        "misses": database.misses - before[1],
        "fused": oracle.decisions["fused"] - before[2]["fused"],
        "not fused": oracle.decisions["not fused"] - before[2]["not fused"],
    }


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    paths, target = measured_models(args, "profile")
    database = ProfileDatabase(args.profile_db)
    oracle = ProfilingOracle(database, "host", target.cpu, args.threads)
    shapes = parse_shape_overrides(args.shape)
    rows = {}
    for path in tqdm(paths, desc="models", unit=" model", disable=len(paths) < 2):
        rows[path.stem] = profile_model(path, oracle, shapes, not args.no_rewrite)
    print(f"profiling database {database.path} ({len(database)} entries), CPU {target.cpu_name}")
    header = f"{'model':<16} {'yellow cells':>12} {'hits':>6} {'misses (measured)':>17} {'fused':>6} {'not fused':>9}"
    print(header)
    print("-" * len(header))
    for name, r in rows.items():
        print(f"{name:<16} {r['hits'] + r['misses']:>12} {r['hits']:>6} {r['misses']:>17} {r['fused']:>6} {r['not fused']:>9}")
    database.close()
    return 0


def entry():
    run_tool("dnnf-profile", main)


if __name__ == "__main__":
    entry()
