"""Attention, one head at a time: the scores and probabilities never fill a buffer.

An attention block of the fusion plan (``fusion/attention.py``) lowers to a
``batch_matmul`` Q @ K^T over (batch x heads), the mask add and the softmax (a row
group), and a ``batch_matmul`` P @ V. Scheduled one by one, each writes its whole
(batch x heads) x seq x seq result into a buffer that the next reads back. The head
loop is instead one ``scf.forall`` over the heads (one head per iteration, spread
over the threads) with the whole chain fused into it (``fuse_into_containing_op``,
producers last to first; ``bubble_up_extract_slice`` moves each head's slice above
the reshapes between the ops). The ops of an iteration are then scheduled as usual
(register-tiled matmuls, the row loop of the softmax), on one head: its scores and
probabilities (seq x seq) stay in the cache. When the heads are merged back by a
transpose of P @ V (``[b, h, s, d] -> [b, s, h, d]``), that transpose is the loop's
root: each head's P @ V is a tile that the transpose stores in its place, and no
buffer holds the P @ V of all heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..kernel_plan import OpSchedule, Planner
from ..linalg_queries import (TENSOR_RESHAPES,
                              accumulator_fill, enclosing_function, only_user, producer, reassociation_groups,
                              static_tensor_type)

HEAD_LOOP = "dnnf.head_loop"  # on the scf.forall of a head loop made: the tag of its output
_MIDDLE = ("linalg.generic", "linalg.reduce", "linalg.fill")


@dataclass
class AttentionChain:
    scores: ir.Operation  # batch_matmul Q @ K^T
    middle: list  # the linalg ops between the two, in program order (mask, softmax, fills)
    output: ir.Operation  # batch_matmul P @ V
    root: ir.Operation  # the root of the head loop: the output, or the transpose merging its heads
    head_dims: tuple  # the dims of the root's result that are the heads (batch x heads)

    @property
    def heads(self) -> int:
        """Iterations of the head loop: the batch dim of the output (batch x heads)."""
        return static_tensor_type(self.output.results[0]).shape[0]

    @property
    def ops(self) -> list:
        """Every op of the chain but the output and the root, in program order."""
        order = {op: i for i, op in enumerate(self.output.parent.regions[0].blocks[0].operations)}
        return sorted([self.scores, *self.middle], key=lambda op: order[op])


def attention_chain(output) -> AttentionChain | None:
    """The chain whose P @ V is ``output`` (a ``batch_matmul``), or None: its left
    operand computed, through reshapes, by element-wise ops and row reductions from
    one other ``batch_matmul``. An op that is also used outside the chain (a mask
    that other kernels read too) stays out of it, and so does what only it needs."""
    if output.name != "linalg.batch_matmul" or static_tensor_type(output.results[0]) is None:
        return None
    found = []
    stack = [output.operands[0]]
    while stack:
        op = producer(stack.pop())
        if op is None or op in found:
            continue
        if op.name in TENSOR_RESHAPES + _MIDDLE + ("linalg.batch_matmul",):
            found.append(op)
            if op.name != "linalg.batch_matmul":
                stack.extend(op.operands[:1] if op.name in TENSOR_RESHAPES else op.operands)
    while True:  # a fixed point: an op dropped may leave its producers with uses outside
        inside = {output, *found}
        kept = [op for op in found if all(use.owner in inside for result in op.results for use in result.uses)]
        if len(kept) == len(found):
            break
        found = kept
    scores = [op for op in found if op.name == "linalg.batch_matmul"]
    middle = [op for op in found if op.name in _MIDDLE]
    if len(scores) != 1 or not any(op.name == "linalg.reduce" for op in middle):
        return None
    root = _merging_transpose(output)
    if root is None:
        return AttentionChain(scores[0], middle, output, output, (0,))
    return AttentionChain(scores[0], middle, output, *root)


def _merging_transpose(output):
    """(transpose, head dims of its result) when the only use of ``output``'s result
    is a ``linalg.transpose``, directly or through a reshape splitting the batch dim
    (``[b * h, s, d] -> [b, h, s, d]``), that keeps the heads out of its innermost dim
    (which its schedule vectorizes whole); else None."""
    user, batch_dims = only_user(output.results[0]), [0]
    if user is not None and user.name == "tensor.expand_shape":
        user, batch_dims = only_user(user.results[0]), reassociation_groups(user)[0]
    if user is None or user.name != "linalg.transpose":
        return None
    permutation = list(ir.DenseI64ArrayAttr(user.attributes["permutation"]))
    head_dims = tuple(j for j, source in enumerate(permutation) if source in batch_dims)
    return None if len(permutation) - 1 in head_dims else (user, head_dims)


def attention_chains(ops: list, threads: int) -> list:
    """The attention chains among the linalg ops ``ops`` worth a head loop on
    ``threads`` threads: with a head for each thread at least (else their own
    schedules, which split rows among the threads, use them better)."""
    chains = [chain for op in ops if (chain := attention_chain(op)) is not None]
    return [chain for chain in chains if chain.heads >= max(2, threads)]


def schedule_head_loop(planner: Planner, chain: AttentionChain):
    """One ``scf.forall`` over the heads (the batch dim of ``chain.output``) with the
    chain fused into it; the ops keep their tags, so their own schedules find them in it."""
    s = planner.script
    tag = planner.new_tag(chain.output)
    function = s.begin_alternatives(s.parent_func(s.match([chain.output.name], tag=tag)))
    rank = static_tensor_type(chain.root.results[0]).rank
    sizes = [1 if dim in chain.head_dims else 0 for dim in range(rank)]
    _, forall = s.tile_forall(s.match([chain.root.name], within=function, tag=planner.new_tag(chain.root)), sizes)
    producers = [chain.output] if chain.root != chain.output else []
    producers += [accumulator_fill(chain.output), *chain.ops[::-1], accumulator_fill(chain.scores)]
    producers = [op for op in producers if op is not None]
    for op in producers:
        s.patterns(forall, ["tensor.bubble_up_extract_slice", "canonicalization"])
        _, forall = s.fuse_into(s.match([op.name], within=function, tag=planner.new_tag(op)), forall)
    s.annotate(forall, HEAD_LOOP, tag)
    # The ops fused in are dead outside now; erase them (the tags must match one op
    # each) and merge the copies of an op that two others in the loop read.
    s.canonicalize(function)
    # A chain that does not fuse (e.g. a reshape between its ops that the slices of
    # one head cannot cross) keeps the function as it was: each op on its own.
    s.next_alternative()
    s.end_nested()
    shape = tuple(static_tensor_type(chain.output.results[0]).shape)
    planner.add_schedule(OpSchedule(f"{tag}.heads", chain.output.name, shape, "head-loop", {"fused": len(producers)},
                                    enclosing_function(chain.output)))


def confirm_head_loops(module: ir.Module, schedules: list) -> None:
    """After the schedule ran: a head loop whose chain did not fuse (its alternative
    kept the ops apart, each then on one thread) is reported as such."""
    made = {ir.StringAttr(op.attributes[HEAD_LOOP]).value for op in walk_ops(module.operation, {"scf.forall"})
            if HEAD_LOOP in op.attributes}
    for schedule in schedules:
        if schedule.strategy == "head-loop" and schedule.tag.removesuffix(".heads") not in made:
            schedule.strategy = "head-loop not fused: ops apart"


__all__ = ["AttentionChain", "attention_chain", "attention_chains", "confirm_head_loops", "schedule_head_loop"]
