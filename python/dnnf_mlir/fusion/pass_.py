"""The ``ecg-fuse`` pass: plan fusion blocks per function and outline them into ``ecg.fused``.

Blocks stay within the fusion limits of the target the code is for (``target``, a
name or a ``codegen.Target``: ``Target.fusion_limits``).
"""

import json
import time

from ..asm import write_bytes
from ..codegen import Target, get_target
from ..statistics import function_statistics
from ..transforms.pass_base import ModulePass, PassError, write_stats
from ..transforms.registry import described_by_table
from .attention import fuse_attention
from .graph import OpGraph
from .horizontal import combine_siblings
from .lrn_pools import fuse_lrn_pools
from .oracle import ConservativeOracle
from .outline import outline
from .picture import PictureError, plan_svg
from .plan_graph import plan_graph
from .plan import FusionPlan
from .profile_db import ProfileDatabase
from .profiling import ProfilingOracle, profile_report
from .planner_dnnf import plan_dnnf
from .planner_tvm import plan_tvm
from .stats import function_report, layer_statistics, module_report

MODES = ("dnnf", "tvm", "none")


def plan_fusion(function, mode: str = "dnnf", oracle=None, horizontal: bool = True,
                attention: bool = True, target: "str | Target" = "host") -> FusionPlan:
    """The fusion plan of one ``func.func`` for ``target``; ``outline(plan)`` applies it.
    ``oracle`` decides the Y cells in dnnf mode (default: ``ConservativeOracle``). After
    Listing 1 in dnnf mode, ``horizontal`` merges sibling contractions
    (``horizontal.py``, which already rewrites the function: the contractions, not the
    blocks) and ``attention`` makes each attention chain one block (``attention.py``)."""
    if mode not in MODES:
        raise ValueError(f"unknown fusion mode '{mode}' (one of {', '.join(MODES)})")
    start = time.perf_counter()
    plan = FusionPlan(mode, OpGraph(function.regions[0].blocks[0]), get_target(target).fusion_limits)
    if mode == "dnnf":
        plan_dnnf(plan, oracle or ConservativeOracle())
        if horizontal:
            plan = combine_siblings(plan, get_target(target).merges_laid_out_projections)
        if attention:
            plan = fuse_attention(plan)
        if get_target(target).lrn_in_pools:
            plan = fuse_lrn_pools(plan)
    elif mode == "tvm":
        plan_tvm(plan)
    plan.seconds = time.perf_counter() - start
    return plan


def fuse_function(function, mode: str = "dnnf", oracle=None, horizontal: bool = True,
                  attention: bool = True, target: "str | Target" = "host") -> dict:
    """Fuse one ``func.func`` in place for ``target``; return its report entry."""
    before, layers_before = function_statistics(function), layer_statistics(function)
    plan = plan_fusion(function, mode, oracle, horizontal, attention, target)
    outline(plan)
    return function_report(plan, before, layers_before, layer_statistics(function))


def fuse_module(module, mode: str = "dnnf", oracle=None, horizontal: bool = True,
                attention: bool = True, target: "str | Target" = "host") -> dict:
    """Fuse every function of ``module`` in place for ``target``; return the report
    ``stats-file`` holds."""
    start = time.perf_counter()
    target = get_target(target)
    op = module.operation if hasattr(module, "operation") else module
    functions = {
        f.attributes["sym_name"].value: fuse_function(f.operation, mode, oracle, horizontal, attention, target)
        for f in op.regions[0].blocks[0].operations
        if f.operation.name == "func.func"
    }
    return module_report(mode, functions, time.perf_counter() - start)


@described_by_table
class FusePass(ModulePass):
    """Fuses ECG ops into ``ecg.fused`` blocks with DNNFusion's planner or TVM's rules."""

    NAME = "ecg-fuse"

    def run(self, module):
        # Option errors are reported at the first function: a module parsed from a file has no location of its own.
        functions = [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"]
        where = functions[0] if functions else None
        mode = self.options["mode"]
        if mode not in MODES:
            raise PassError(f"unknown mode '{mode}' (one of {', '.join(MODES)})", where)
        try:
            target = get_target(self.options["target"], self.options["cpu"] or None,
                                device=self.options["device"] or None)
        except ValueError as error:  # an unknown target or CPU
            raise PassError(str(error), where) from None
        oracle = None
        if self.options["profile"] and mode == "dnnf":  # only its Y cells are decided by an oracle
            database = ProfileDatabase(self.options["profile-db"] or None)
            oracle = ProfilingOracle(database, target)
        report = fuse_module(module, mode, oracle, self.options["horizontal"], self.options["attention"], target)
        if oracle is not None:
            report["profile"] = profile_report(oracle)
            database.close()
        if self.options["stats-file"]:
            write_stats(report, self.options["stats-file"])
        if self.options["plan-file"]:
            write_bytes(json.dumps(plan_graph(module).to_json(), indent=1).encode(), self.options["plan-file"])
        if self.options["svg-file"]:
            try:
                write_bytes(plan_svg(plan_graph(module)), self.options["svg-file"])
            except PictureError as error:
                raise PassError(str(error), where) from None
