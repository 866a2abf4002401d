"""A recurrence's states updated in place across its time steps.

Each step of an LSTM / GRU / RNN loop (``ecg_to_linalg/recurrent.py``) computes its new
states (h, and c for an LSTM) with element-wise ops into fresh ``tensor.empty``
results, so bufferization allocated two small buffers per step and freed the previous
step's: a ``malloc`` / ``free`` pair per state and step in a loop whose step takes a few
microseconds. ``write_states_in_place`` makes the op producing each yielded state write
into the state it replaces (the loop's iteration argument): the old state is read before
(the step's matmul, the cell's products, element by element at the same index), so
one-shot bufferization updates the loop's buffer in place; where it would not be safe
it copies, as for any other operand.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_time_step_loop
from ..linalg_queries import indexing_maps, linalg_init, parallel_loops
from .unit_dims import STRUCTURAL


def _fresh_elementwise(value):
    """The element-wise ``linalg.generic`` producing ``value`` into a ``tensor.empty``
    it never reads, or None."""
    op = value.owner if isinstance(value, ir.OpResult) else None
    if op is None or op.name != "linalg.generic" or len(op.results) != 1:
        return None
    init = linalg_init(op)
    if not isinstance(init, ir.OpResult) or init.owner.name != "tensor.empty":
        return None
    if not all(parallel_loops(op)) or not indexing_maps(op)[-1].is_permutation:
        return None
    body = op.regions[0].blocks[0]
    if any(True for _ in body.arguments[len(body.arguments) - 1].uses):
        return None
    return op


def _write_into(op, state):
    """Rebuild the generic ``op`` with ``state`` as its output; an input that is ``state``
    itself, read at the output's index, is read from the output instead (read as an
    input too, bufferization would see a write to a buffer the op still reads)."""
    maps = indexing_maps(op)
    inputs = list(op.operands)[:-1]
    dropped = [i for i, (v, m) in enumerate(zip(inputs, maps)) if v == state and m == maps[-1]]
    kept = [i for i in range(len(inputs)) if i not in dropped]
    with ir.InsertionPoint(op), op.location:
        rebuilt = _mlir.linalg.GenericOp(
            [state.type], [inputs[i] for i in kept], [state],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(maps[i]) for i in kept + [len(maps) - 1]]),
            op.attributes["iterator_types"])
    for name in list(op.attributes):
        if name not in STRUCTURAL:
            rebuilt.attributes[name] = op.attributes[name]
    body = op.regions[0].blocks[0]
    body.append_to(rebuilt.regions[0])
    body = rebuilt.regions[0].blocks[0]
    out = body.arguments[len(body.arguments) - 1]
    for i in reversed(dropped):
        body.arguments[i].replace_all_uses_with(out)
        body.erase_argument(i)
    op.results[0].replace_all_uses_with(rebuilt.results[0])
    op.erase()


def write_states_in_place(module: ir.Module) -> int:
    """Make every time-step loop's states written in place (see the module doc);
    returns how many yielded states now write into their iteration argument."""
    count = 0
    for loop in walk_ops(module.operation, {"scf.for"}):
        if not is_time_step_loop(loop):
            continue
        body = loop.regions[0].blocks[0]
        terminator = body.operations[len(body.operations) - 1]
        carried = list(body.arguments)[1:]
        for state, yielded in zip(carried, list(terminator.operands)):
            op = _fresh_elementwise(yielded)
            if op is None or op.results[0].type != state.type:
                continue
            _write_into(op, state)
            count += 1
    return count


__all__ = ["write_states_in_place"]
