"""What every ``ecg.fused`` op of a fused function must satisfy, whatever it computes:
the target's fusion limits on inputs, outputs and live values
(``codegen.FusionLimits``), and an ``IR_REMOVABLE`` entry that marks exactly the body
values nothing outside reads.

Checked independently of the planner (from the fused op's body alone), so that a
planner that miscounts cannot also approve its own blocks.
"""

from .._mlir import ir
from ..codegen import FusionLimits, get_target
from ..fusion import IR_REMOVABLE


def peak_live_values(body: list) -> int:
    """The most body results alive at once between their definition and last use.

    Constants the body holds (``ecg.constant``, cloned in by fusion) are not counted:
    they are immediates or memory operands, not values a register keeps, and the
    planner does not count them either."""
    position = {op: i for i, op in enumerate(body)}
    last_use = {}
    for user in body[:-1]:
        for value in user.operands:
            if isinstance(value.owner, ir.OpView) and value.owner.operation.name == "ecg.constant":
                continue
            last_use[value] = position[user]
    return max((sum(1 for v, end in last_use.items()
                    if isinstance(v.owner, ir.OpView) and position.get(v.owner.operation, -1) <= i < end)
                for i in range(len(body))), default=0)


def fused_op_problems(function, limits: FusionLimits | None = None) -> list:
    """What the ``ecg.fused`` ops of ``function`` (a ``func.func``) get wrong, one line
    each; ``limits`` are those it was fused within (default: the host's, ``ecg-fuse``'s
    default target)."""
    limits = limits or get_target("host").fusion_limits
    problems = []
    for op in function.regions[0].blocks[0].operations:
        if op.operation.name != "ecg.fused":
            continue
        view = op.operation.opview
        if len(view.inputs) > limits.max_inputs or len(view.outputs) > limits.max_outputs:
            problems.append(f"a fused op with {len(view.inputs)} inputs and {len(view.outputs)} outputs")
        body = [o.operation for o in view.body_ops]
        live = peak_live_values(body)
        if live > limits.max_live_values:
            problems.append(f"a fused op with {live} live values")
        yielded = set(body[-1].operands)
        removable = list(ir.DenseBoolArrayAttr(op.operation.attributes[IR_REMOVABLE]))
        results = [r for o in body[:-1] if o.name != "ecg.constant" for r in o.results]
        if removable != [r not in yielded for r in results]:
            problems.append(f"a fused op whose {IR_REMOVABLE} is {removable} for {len(results)} values")
    return problems


__all__ = ["fused_op_problems", "peak_live_values"]
