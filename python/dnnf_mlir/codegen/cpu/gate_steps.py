"""A recurrence step's gate matmuls and their cell update as one micro-kernel.

An LSTM step in its time-step loop is four ``[batch, H] x [H, H]`` matmuls (one per
gate: ``recurrent_cells.Direction.split_gates``) read by one element-wise generic that
applies the gate activations and computes the new c and h (``state_updates.py``). As
separate kernels every gate's pre-activations were stored whole and read back by
the cell update. Here the update is the root of the tiling: each 1 x NR tile of it
computes the four gates' 1 x NR matmul tiles (``structured.fuse``; each an
accumulator tile kept in registers across its k loop, as in ``matmul.py``) and applies
the activations and the update to them before the single store of c and h.

The tile is the whole width: the new h is written in place over the old one
(``step_states.py``), which every gate matmul reads whole, so a second column tile
would read a state the first had already overwritten (bufferization then copies the
state every step). Each gate's k loop keeps width / lanes accumulators; the finished
gates wait in registers (or L1, past the register file) for the update.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._mlir import ir
from ...kernel_functions import is_time_step_loop
from ..kernel_plan import OpSchedule
from ..linalg_queries import (accumulator_fill, has_default_maps, indexing_maps, is_f32, only_user, parallel_loops,
                              static_tensor_type, touches_i1)
from .cpu_planner import CpuPlanner
from .matmul import LIBRARY


ACCUMULATORS = 16  # vector accumulators of one gate's k loop, at most (rows x width / lanes)


@dataclass(frozen=True)
class GateStep:
    root: object  # the element-wise cell update
    matmuls: tuple  # the gate matmuls it reads, in program order
    rows: int  # MR: rows of a register tile (batch rows sharing each weight load)
    columns: int  # NR: columns of a register tile, the whole width


def _gate_matmuls(op) -> list:
    """The matmuls whose result only ``op`` reads, with the identity map, over its shape."""
    found = []
    identity = indexing_maps(op)[-1]
    for value, amap in zip(list(op.operands), indexing_maps(op)):
        owner = value.owner if isinstance(value, ir.OpResult) else None
        if owner is None or owner.name != "linalg.matmul" or owner in found or amap != identity:
            continue
        if only_user(value) == op and has_default_maps(owner) and accumulator_fill(owner) is not None:
            found.append(owner)
    return found


def gate_steps(ops, lanes: int) -> list:
    """The gate steps among ``ops``: element-wise f32 generics in a time-step loop reading two or
    more matmuls (see the module doc), whose width is a whole number of vectors."""
    steps = []
    for op in ops:
        if op.name != "linalg.generic" or not is_time_step_loop(op.parent) or touches_i1(op):
            continue
        loops = parallel_loops(op)
        types = [static_tensor_type(r) for r in op.results]
        if not loops or not all(loops) or len(loops) != 2 or any(t is None or not is_f32(t) for t in types):
            continue
        matmuls = _gate_matmuls(op)
        matmuls.sort(key=lambda m: ops.index(m))
        if len(matmuls) < 2 or any(static_tensor_type(m.results[0]) is None for m in matmuls):
            continue
        batch, width = types[0].shape
        if width % lanes == 0:
            rows = next(r for r in range(min(batch, ACCUMULATORS * lanes // width), 0, -1) if batch % r == 0) \
                if width <= ACCUMULATORS * lanes else 1
            steps.append(GateStep(op, tuple(matmuls), rows, width))
    return steps


def schedule_gate_step(planner: CpuPlanner, step: GateStep):
    """Tile the cell update by rows of NR with the gate matmuls fused in, each matmul tile a k loop of
    broadcast FMAs into its accumulators (``lowering/cpu/matmul.mlir``'s steps)."""
    s = planner.script
    tag = planner.new_tag(step.root)
    root = s.match([step.root.name], tag=tag)
    _, tiles = s.include(LIBRARY, "__dnnf_matmul_epilogue_register_tiles", [root], [step.rows, step.columns], results=2)
    k = static_tensor_type(step.matmuls[0].operands[0]).shape[-1]
    unroll = next((u for u in (4, 2) if k % u == 0 and k > u), 1)
    for matmul in step.matmuls:
        mtag = planner.new_tag(matmul)
        (kloop,) = s.include(LIBRARY, "__dnnf_matmul_k_steps", [s.match([matmul.name], within=tiles, tag=mtag)], results=1)
        if unroll > 1:
            s.unroll(kloop, unroll)
        s.include(LIBRARY, "__dnnf_matmul_vectorize", [s.match([matmul.name], within=tiles, tag=mtag), tiles])
        planner.strategies[mtag] = "gate_step"
    s.vectorize(s.match([step.root.name], within=tiles, tag=tag))
    planner.cleanup()
    m, n = static_tensor_type(step.root.results[0]).shape
    details = dict(register_tile=(step.rows, step.columns), gates=len(step.matmuls), k_unroll=unroll)
    planner.add_schedule(OpSchedule(tag, step.root.name, (m, n, k), "gate_step", details))


__all__ = ["GateStep", "gate_steps", "schedule_gate_step"]
