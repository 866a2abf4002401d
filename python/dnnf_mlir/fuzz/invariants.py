"""What every ``ecg.fused`` op of a fused function must satisfy, whatever it computes:
the planner's limits on inputs, outputs and live values, and an ``IR_REMOVABLE``
entry that marks exactly the body values nothing outside reads.

Checked independently of the planner (from the fused op's body alone), so that a
planner that miscounts cannot also approve its own blocks.
"""

from .._mlir import ir
from ..ecg.ops.structure import MAX_FUSED_INPUTS, MAX_FUSED_OUTPUTS
from ..fusion import IR_REMOVABLE
from ..fusion.constraints import MAX_LIVE_VALUES


def peak_live_values(body: list) -> int:
    """The most body results alive at once between their definition and last use."""
    position = {op: i for i, op in enumerate(body)}
    last_use = {}
    for user in body[:-1]:
        for value in user.operands:
            last_use[value] = position[user]
    return max((sum(1 for v, end in last_use.items()
                    if isinstance(v.owner, ir.OpView) and position.get(v.owner.operation, -1) <= i < end)
                for i in range(len(body))), default=0)


def fused_op_problems(function) -> list:
    """What the ``ecg.fused`` ops of ``function`` (a ``func.func``) get wrong, one line each."""
    problems = []
    for op in function.regions[0].blocks[0].operations:
        if op.operation.name != "ecg.fused":
            continue
        view = op.operation.opview
        if len(view.inputs) > MAX_FUSED_INPUTS or len(view.outputs) > MAX_FUSED_OUTPUTS:
            problems.append(f"a fused op with {len(view.inputs)} inputs and {len(view.outputs)} outputs")
        body = [o.operation for o in view.body_ops]
        live = peak_live_values(body)
        if live > MAX_LIVE_VALUES:
            problems.append(f"a fused op with {live} live values")
        yielded = set(body[-1].operands)
        removable = list(ir.DenseBoolArrayAttr(op.operation.attributes[IR_REMOVABLE]))
        results = [r for o in body[:-1] if o.name != "ecg.constant" for r in o.results]
        if removable != [r not in yielded for r in results]:
            problems.append(f"a fused op whose {IR_REMOVABLE} is {removable} for {len(results)} values")
    return problems


__all__ = ["fused_op_problems", "peak_live_values"]
