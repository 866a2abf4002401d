"""The CPU kernel plan of a module: which schedule each linalg op gets.

``plan(module, target, threads)`` tags every linalg op, makes each attention chain a
loop over its heads (``attention.py``), dispatches every op by kind to its schedule
(``matvec.py``, ``matmul.py``, ``conv.py``, ``row_fusion.py``, ``rows.py`` for the rest) and
returns the transform-dialect script (``@__dnnf_codegen``, which includes sequences
of the ``lowering/cpu/`` libraries) that the pipeline runs on linalg on tensors, with
the ``OpSchedule`` decided for each op.
Every decision involving two ops (an epilogue, a fused fill) stays within a function:
the ops are linked by SSA values, which do not cross functions.
"""

from __future__ import annotations

from ..._mlir import ir
from ...kernel_functions import is_time_step_loop
from ..linalg_queries import (accumulator_fill, elementwise_consumer, enclosing_function, is_f32, linalg_ops,
                              static_tensor_type)
from .attention import attention_chains, schedule_head_loop
from .conv import feeds_accumulated_convolution, schedule_conv
from .cpu_planner import CpuPlanner
from .grouped import MARK as GROUPED_MARK, grouped_fill, schedule_grouped
from .grouped_epilogues import writes_shuffled
from .gather_sums import is_gather_sum, schedule_gather_sum, zero_fill
from .matmul import schedule_matmul
from .matvec import MARK, schedule_matvec
from .row_fusion import row_groups, schedule_row_group
from .rows import schedule_rows
from .target import CpuTarget

CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_2d_nchw_fchw")


def plan(module: ir.Module, target: CpuTarget, threads: int = 1):
    """Tag the linalg ops of ``module`` and return (transform ``Script``, [OpSchedule])."""
    planner = CpuPlanner(target, threads)
    ops = linalg_ops(module)
    # Tags first, in program order: an op's hash changes with its attributes, and the
    # sets and dicts below are keyed by ops.
    for op in ops:
        planner.new_tag(op)

    contractions = [op for op in ops if op.name in CONTRACTIONS or MARK in op.attributes]
    # Fills that initialize a contraction's accumulator are fused into its tiles.
    fused_fills = {fill for op in contractions if (fill := accumulator_fill(op)) is not None}
    fused_fills |= {fill for op in ops if is_gather_sum(op) and (fill := zero_fill(op)) is not None}
    fused_fills |= {fill for op in ops if GROUPED_MARK in op.attributes and (fill := grouped_fill(op)) is not None}
    # Softmax, layer normalization: a loop over rows with the whole group fused in.
    groups = {group.root: group for group in row_groups([op for op in ops if op not in contractions])}
    in_groups = {member for group in groups.values() for member in group.members}
    # An attention chain first becomes a loop over its heads; its ops, fused into that
    # loop, are then scheduled below as any other, on one thread each (the heads are
    # what the threads share).
    in_head_loops = set()
    threads = planner.threads
    for chain in attention_chains(contractions, threads):
        schedule_head_loop(planner, chain)
        in_head_loops.update([chain.root, chain.output, *chain.ops])
    # Program order: the producers of a contraction's operands are tiled before it (so
    # that structured.fuse, which fuses producers greedily, only finds the fill), and
    # an element-wise consumer is known to be an epilogue before it is reached. The
    # body of an scf.forall of ``prepare`` (over a grouped convolution's blocks of groups,
    # loops within them included) runs on one thread, like a head loop's ops: the loop is
    # what the threads share. So does the body of a
    # recurrence's loop over its time steps (an scf.for): a parallel region per step costs more
    # than its small matmul.
    consumed = []
    for op in ops:
        first = len(planner.schedules)
        planner.threads = 1 if op in in_head_loops or _in_parallel_loop(op) or is_time_step_loop(op.parent) \
            else threads
        if MARK in op.attributes:
            schedule_matvec(planner, op)
        elif GROUPED_MARK in op.attributes:
            epilogue = schedule_grouped(planner, op)
            if epilogue is not None:
                consumed.append(epilogue)
        elif op.name in CONTRACTIONS:
            out = static_tensor_type(op.results[0]) if op.results else None
            if out is None or not is_f32(out):
                schedule_rows(planner, op)
            else:
                # A consumer in a row group is fused there, not into the contraction.
                epilogue = elementwise_consumer(op, permuted_output=writes_shuffled(op))
                if epilogue in in_groups or epilogue in groups:
                    epilogue = None
                if feeds_accumulated_convolution(op):
                    fused = False  # computed in the tiles of the convolution it feeds
                elif op.name == "linalg.conv_2d_nchw_fchw":
                    fused = schedule_conv(planner, op, epilogue=epilogue)
                else:
                    fused = schedule_matmul(planner, op, batch=op.name == "linalg.batch_matmul", epilogue=epilogue)
                if fused:
                    consumed.append(epilogue)
        elif op in groups:
            schedule_row_group(planner, groups[op])
        elif is_gather_sum(op):
            schedule_gather_sum(planner, op)
        elif op not in fused_fills and op not in consumed and op not in in_groups:
            schedule_rows(planner, op)
        for schedule in planner.schedules[first:]:
            schedule.function = enclosing_function(op)
    planner.threads = threads
    planner.finish()
    return planner.script, planner.schedules



def _in_parallel_loop(op) -> bool:
    """Whether ``op`` is inside an ``scf.forall`` of the function (directly, or in a
    loop of its body: a grouped convolution's groups within a block)."""
    parent = op.parent
    while parent.name != "func.func":
        if parent.name == "scf.forall":
            return True
        parent = parent.parent
    return False


__all__ = ["CONTRACTIONS", "plan"]
