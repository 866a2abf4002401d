"""Outlining a fusion plan: each block becomes one ``ecg.fused`` op.

The fused op's inputs are the values the block reads from outside, in first-use
order; its outputs the values used outside, in definition order; its ``mapping``
the block's type. Constants that are splat or small are cloned into the body, the
others (weights) stay outside as inputs, where the weights pass finds them. The
attribute ``dnnf.ir_removable`` (``IR_REMOVABLE``) holds one boolean per result of
the body's non-constant ops, in body order: true when every consumer of the value
is in the block, so the value is never materialised.

Blocks may interleave with other ops in program order, so the function body is
re-sorted topologically (each block as one unit, in the order of its first op) as
the fused ops are created.
"""

import heapq

from .._mlir import ir
from ..ecg.ops.structure import FusedOp, YieldOp
from .graph import is_small_constant

IR_REMOVABLE = "dnnf.ir_removable"


def operation_of(owner):
    """The ``ir.Operation`` of a value's or a use's owner; None for a block argument's."""
    if isinstance(owner, ir.OpView):
        return owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def _units(plan) -> list:
    """The body's ops except the terminator grouped into units, ``(ops, block)`` for a
    block's members and ``([op], None)`` for any other op, in a topological order that
    keeps program order where it can. (Operations are hashed here, before anything
    changes: an operation's hash changes with its operands.)"""
    ops = [op.operation for op in plan.graph.block.operations][:-1]
    position = {op: index for index, op in enumerate(ops)}
    unit_of = {op: index for index, op in enumerate(ops)}
    members = {index: [op] for index, op in enumerate(ops)}
    blocks = {}
    for block in plan.blocks:
        operations = [plan.graph.nodes[m].operation for m in block.ordered()]
        key = position[operations[0]]
        members.update({position[op]: [] for op in operations})
        members[key] = operations
        blocks[key] = block
        unit_of.update(dict.fromkeys(operations, key))
    deps = {key: set() for key, group in members.items() if group}
    users = {key: [] for key in deps}
    for key in deps:
        for op in members[key]:
            for value in op.operands:
                owner = operation_of(value.owner)
                if owner is not None:
                    dep = unit_of[owner]
                    if dep != key and dep not in deps[key]:
                        deps[key].add(dep)
                        users[dep].append(key)
    waiting = {key: len(d) for key, d in deps.items()}
    ready = [key for key, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        key = heapq.heappop(ready)
        order.append((members[key], blocks.get(key)))
        for user in users[key]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    if len(order) != len(deps):
        raise AssertionError("fusion plan with a cycle between blocks")  # the planners never make one
    return order


def outline_ops(operations: list, mapping, terminator) -> ir.Operation:
    """Replace ``operations`` (in program order) by one ``ecg.fused`` op before ``terminator``."""
    def inside(op) -> bool:
        return any(op == member for member in operations)

    inputs, constants = {}, {}
    for op in operations:
        for value in op.operands:
            owner = operation_of(value.owner)
            if owner is not None and inside(owner):
                continue
            if owner is not None and owner.name == "ecg.constant" and is_small_constant(owner.opview):
                constants.setdefault(owner, None)
            else:
                inputs.setdefault(value, None)
    outputs = [r for op in operations for r in op.results if any(not inside(operation_of(use.owner)) for use in r.uses)]
    location = ir.Location.fused([op.location for op in operations])
    fused = FusedOp.build(list(inputs), {"mapping": mapping.value}, [r.type for r in outputs], loc=location,
                          ip=ir.InsertionPoint(terminator)).operation
    for old, new in zip(outputs, fused.results):
        for use in list(old.uses):
            if not inside(operation_of(use.owner)):
                use.owner.operands[use.operand_number] = new
    body = fused.regions[0].blocks.append(*[v.type for v in inputs], arg_locs=[location] * len(inputs))
    remap = dict(zip(inputs, body.arguments))
    for constant in constants:
        remap[constant.results[0]] = constant.clone(ip=ir.InsertionPoint(body)).results[0]
    yield_op = YieldOp.build(outputs, {}, [], loc=location, ip=ir.InsertionPoint(body)).operation
    for op in operations:
        op.move_before(yield_op)
        for index, value in enumerate(op.operands):
            if value in remap:
                op.operands[index] = remap[value]
    yielded = set(outputs)
    fused.attributes[IR_REMOVABLE] = ir.DenseBoolArrayAttr.get(
        [r not in yielded for op in operations if op.name != "ecg.constant" for r in op.results]
    )
    for constant in constants:
        if not list(constant.results[0].uses):
            constant.erase()
    return fused


def outline(plan) -> list:
    """Apply ``plan`` to its function body; returns the new ``ecg.fused`` ops."""
    terminator = [op.operation for op in plan.graph.block.operations][-1]
    fused = []
    with terminator.context:
        for operations, block in _units(plan):
            if block is None:
                operations[0].move_before(terminator)
            else:
                fused.append(outline_ops(operations, block.mapping, terminator))
    return fused
