"""An LSTM step's two state updates merged into one element-wise op with two results.

In a time-step loop the new cell state ``c`` is both a state the loop yields and an
input of the new hidden state ``h = o * tanh(c)``; ``linalg-fuse-elementwise-ops`` only
fuses a producer with a single use, so the step kept two generics, ``c`` stored whole
and read back by the second. ``merge_state_updates`` makes them one generic with both
results (c, then h): the cell update is then a single epilogue over the four gate
matmuls' register tiles (``gate_steps.py``).
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...kernel_functions import is_time_step_loop
from ..linalg_queries import indexing_maps, parallel_loops
from ..lowered_module import walk_ops
from .unit_dims import STRUCTURAL


def _elementwise(op) -> bool:
    """A one-result generic over parallel loops writing its result with the identity map."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    loops = parallel_loops(op)
    return bool(loops) and all(loops) and indexing_maps(op)[-1] == ir.AffineMap.get_identity(len(loops))


def _merge_candidate(producer):
    """The element-wise consumer that ``producer`` (element-wise, in a time-step loop) can merge
    into, or None: its only user besides the loop's yield, later in the same block, reading it
    with the identity map over the same loops."""
    if not _elementwise(producer) or not is_time_step_loop(producer.parent):
        return None
    result = producer.results[0]
    users = {use.owner for use in result.uses}
    consumers = [u for u in users if u.name != "scf.yield"]
    if len(consumers) != 1 or len(users) != 2:
        return None
    consumer = consumers[0]
    if not _elementwise(consumer) or consumer.parent != producer.parent:
        return None
    if list(consumer.attributes["iterator_types"]) != list(producer.attributes["iterator_types"]):
        return None
    maps, inputs = indexing_maps(consumer), list(consumer.operands)[:-1]
    if any(v == result and m != maps[-1] for v, m in zip(inputs, maps)) or consumer.operands[len(inputs)] == result:
        return None
    return consumer


def _move_body(op, block, arguments: list):
    """Move ``op``'s body ops to the end of ``block``, its block arguments replaced by ``arguments``;
    returns the value it yields."""
    body = op.regions[0].blocks[0]
    for old, new in zip(body.arguments, arguments):
        old.replace_all_uses_with(new)
    ops = list(body.operations)
    (value,) = list(ops[-1].operands)
    for inner in ops[:-1]:
        inner.detach_from_parent()
        ir.InsertionPoint(block).insert(inner)
    return value


def _merge(producer, consumer):
    """One generic computing ``producer``'s and ``consumer``'s results, placed at ``consumer``."""
    result = producer.results[0]
    p_maps, c_maps = indexing_maps(producer), indexing_maps(consumer)
    p_inputs = list(producer.operands)[:-1]
    c_inputs = list(consumer.operands)[:-1]
    kept = [i for i, v in enumerate(c_inputs) if v != result]
    inputs = p_inputs + [c_inputs[i] for i in kept]
    outputs = [producer.operands[len(p_inputs)], consumer.operands[len(c_inputs)]]
    maps = p_maps[:-1] + [c_maps[i] for i in kept] + [p_maps[-1], c_maps[-1]]
    with ir.InsertionPoint(consumer), consumer.location:
        merged = _mlir.linalg.GenericOp(
            [result.type, consumer.results[0].type], inputs, outputs,
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]), consumer.attributes["iterator_types"])
    for name in list(consumer.attributes):
        if name not in STRUCTURAL:
            merged.attributes[name] = consumer.attributes[name]
    element = [ir.RankedTensorType(v.type).element_type for v in inputs + outputs]
    block = merged.regions[0].blocks.append(*element)
    args = list(block.arguments)
    n_p = len(p_inputs)
    p_value = _move_body(producer, block, args[:n_p] + [args[len(inputs)]])
    c_args, extra = [], iter(args[n_p:len(inputs)])
    for v in c_inputs:
        c_args.append(p_value if v == result else next(extra))
    c_value = _move_body(consumer, block, c_args + [args[len(inputs) + 1]])
    with ir.InsertionPoint(block), consumer.location:
        _mlir.linalg.YieldOp([p_value, c_value])
    consumer.results[0].replace_all_uses_with(merged.results[1])
    consumer.erase()
    result.replace_all_uses_with(merged.results[0])
    producer.erase()


def merge_state_updates(module: ir.Module) -> int:
    """Merge each time-step loop's state update that another one reads into it (see the
    module doc); returns how many were merged."""
    count = 0
    while True:  # a merge erases two ops of the walk: walk again
        pairs = ((p, _merge_candidate(p)) for p in walk_ops(module.operation, {"linalg.generic"}))
        pair = next(((p, c) for p, c in pairs if c is not None), None)
        if pair is None:
            return count
        _merge(*pair)
        count += 1


__all__ = ["merge_state_updates"]
