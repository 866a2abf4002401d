"""What the GPU schedules need to know of a kernel function: its compute ops in program
order, the op whose tiles the whole kernel is computed in (its root), and its kind.

A kernel function becomes one dispatch: every op of it is computed in the tiles of
one root op, tiled over workgroups and threads, with every other op fused into those
tiles (``schedule.py``). The root is the op producing the kernel's result; a kernel
with several results needs one root whose producers compute all the others (a
densenet block's concatenation and its normalized copy), each written out where its
tile is computed. Results that are slices or reshapes of one op's result (a merged
projection split three ways) are that op's result, viewed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..._mlir import ir
from ..errors import CodegenError
from ..linalg_queries import indexing_maps, linalg_inputs, parallel_loops, static_tensor_type

VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice")


WORKGROUP_SIZE_ATTR = "dnnf.gpu.workgroup_size"  # on each kernel function, from its schedule
SCHEDULE_ATTR = "dnnf.gpu.schedule"  # "fused": one dispatch; "per-op": a dispatch per op, in order
FALLBACK_ATTR = "dnnf.gpu.fallback"  # why a kernel is not one dispatch


class KernelError(CodegenError):
    """A kernel function the GPU schedules cannot make one dispatch of (the message names it)."""


class PhaseError(KernelError):
    """A kernel that one dispatch cannot compute without computing a value again in
    each of its readers' tiles; phased (``analyze(..., phased=True)``), a launch
    computes the value first and the later launches read it."""


class PartialReadError(PhaseError):
    """A kernel reads part of a value it computes through a view the schedules cannot
    fuse through (a leading slice of a contraction's result, ``phases.py``)."""


class ConcatReadError(PhaseError):
    """A kernel reads a concatenation it builds in place (its pieces inserted into one
    destination, ``concats.py``) in another op: fusion cannot tile the pieces through
    the inserts (a Swin block's cyclic shift, concatenated slices read by the window
    partition). Phased, the pieces are computed a launch before their readers."""


class GatherError(PhaseError):
    """A kernel gathers from a value it computes (a padding of a convolution's result):
    the value's producers would be fused whole into each thread that gathers. It is
    computed first, by a dispatch of its own (``analyze(..., phased=True)``)."""


def is_compute(op) -> bool:
    """A linalg op that computes (a fill initializes; views and yields do not count)."""
    return op.name.startswith("linalg.") and op.name not in ("linalg.yield", "linalg.index")


def viewed_op(value):
    """The op whose result ``value`` is, seen through reshapes and slices (None: an argument)."""
    while isinstance(value, ir.OpResult) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    return value.owner if isinstance(value, ir.OpResult) else None


def _captured_producers(op) -> list:
    """The ops of the function whose results ``op``'s body reads (a gather's ``tensor.extract``)."""
    found = []
    function_body = op.parent

    def visit(inner):
        for value in inner.operands:
            owner = value.owner if isinstance(value, ir.OpResult) else None
            if owner is not None and owner.parent == function_body:
                found.append(owner.operation)
        return ir.WalkResult.ADVANCE

    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(visit)
    return found


def _data_operands(op) -> list:
    """The operands whose values ``op`` computes with: all but a destination it only
    writes into (an init that is a slice of a concatenation's result, ``concats.py``)."""
    operands = list(op.operands)
    if not op.name.startswith("linalg.") or not op.results:
        return operands
    inputs = linalg_inputs(op)
    inits = [v for v in operands[len(inputs):] if not (isinstance(v, ir.OpResult) and v.owner.name.startswith("tensor."))]
    return inputs + inits


def direct_producers(op) -> set:
    """The ops of the function whose results ``op`` computes with directly."""
    return {v.owner.operation for v in _data_operands(op) if isinstance(v, ir.OpResult)} | set(_captured_producers(op))


def gathered(op) -> list:
    """The compute ops of the function whose results ``op`` reads at data-dependent
    positions (through a ``tensor.extract`` in its body)."""
    found = []
    for producer in _captured_producers(op):
        source = viewed_op(producer.results[0])
        if source is not None and is_compute(source) and source not in found:
            found.append(source.operation)
    return found


def producers(op, through_gathers: bool = True, stop=frozenset()) -> set:
    """Every op of the function that ``op`` computes with, transitively (not past the
    values it gathers from unless ``through_gathers``, nor past the ops in ``stop``:
    computed by an earlier launch)."""
    seen, work = set(), [op]
    while work:
        current = work.pop()
        direct = [v.owner.operation for v in _data_operands(current) if isinstance(v, ir.OpResult)]
        for producer in direct + (_captured_producers(current) if through_gathers else []):
            if producer not in seen and producer not in stop:
                seen.add(producer)
                work.append(producer)
    return seen


def expr_dims(expr) -> set:
    """The loop dims an affine expression uses."""
    if isinstance(expr, ir.AffineDimExpr):
        return {ir.AffineDimExpr(expr).position}
    if isinstance(expr, ir.AffineBinaryExpr):
        binary = ir.AffineBinaryExpr(expr)
        return expr_dims(binary.lhs) | expr_dims(binary.rhs)
    return set()


def loop_ranges(op) -> list | None:
    """The static extents of a ``linalg.generic``'s loops (from the operands each indexes
    directly); None when one is not known."""
    maps = indexing_maps(op)
    ranges = [None] * maps[0].n_dims
    for value, amap in zip(op.operands, maps):
        t = static_tensor_type(value)
        if t is None:
            continue
        for size, expr in zip(t.shape, amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                ranges[ir.AffineDimExpr(expr).position] = size
    return None if None in ranges else ranges


def has_reduction(op) -> bool:
    parallel = parallel_loops(op)
    return parallel is not None and not all(parallel)


def is_contraction(op) -> bool:
    """A generic reducing products: ``acc + x * y`` (a matmul, a convolution), as
    ``prepare`` leaves every named contraction."""
    if op.name != "linalg.generic" or not has_reduction(op):
        return False
    block = op.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    add = yielded.owner if isinstance(yielded, ir.OpResult) else None
    if add is None or add.name != "arith.addf":
        return False
    accumulator = block.arguments[len(block.arguments) - 1]
    terms = list(add.operands)
    if accumulator not in terms:
        return False
    other = terms[1] if terms[0] == accumulator else terms[0]
    return isinstance(other, ir.OpResult) and other.owner.name == "arith.mulf"


def _kind(ops) -> str:
    contractions = [op for op in ops if is_contraction(op)]
    if any(op not in contractions and has_reduction(op) for op in ops):
        return "reduction"
    return "contraction" if contractions else "elementwise"


@dataclass
class RootGroup:
    """One root of a kernel and the ops computed in its tiles (its producers)."""

    root: object
    ops: list  # the root's producers among the kernel's ops, and the root, in program order
    kind: str  # "contraction", "reduction" or "elementwise"
    phase: int = 0  # a phased kernel's launch it runs in (``phases.py``)

    @property
    def contraction(self):
        return next((op for op in reversed(self.ops) if is_contraction(op)), None)

    @property
    def shape(self) -> tuple:
        return tuple(static_tensor_type(self.root.results[0]).shape)


@dataclass
class Kernel:
    """One kernel function, as the schedules see it: its ops and their root groups."""

    name: str
    function: object
    ops: list  # compute ops in program order
    groups: list  # RootGroup per root, in program order


def pieces(value) -> list:
    """The values a kernel result is made of: itself, seen through reshapes and slices,
    or the pieces inserted into it (a concatenation, ``concats.py``)."""
    while isinstance(value, ir.OpResult) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    if isinstance(value, ir.OpResult) and value.owner.name == "tensor.insert_slice":
        return pieces(value.owner.operands[1]) + pieces(value.owner.operands[0])
    if isinstance(value, ir.OpResult) and value.owner.name in ("tensor.empty", "bufferization.alloc_tensor"):
        return []
    return [value]


def built_in_place(value) -> list:
    """The compute ops of the pieces of a concatenation built in place that ``value``
    reads (seen through reshapes and slices); none when it is not one."""
    while isinstance(value, ir.OpResult) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    if not (isinstance(value, ir.OpResult) and value.owner.name == "tensor.insert_slice"):
        return []
    return [piece.owner.operation for piece in pieces(value) if isinstance(piece, ir.OpResult)]


def analyze(function, phased: bool = False, earlier=()) -> Kernel:
    """The ``Kernel`` of a kernel function (on tensors, after ``prepare``): its roots are
    the ops computing a piece of a result that no other such op computes as a producer.
    ``phased``: the values the kernel gathers from are roots too, computed before their
    gathers (the groups then run one launch each, in order); otherwise a ``GatherError``
    when there are any. ``earlier`` (phased): ops computed by a launch before their
    readers' (``phases.phase_boundaries``), roots that no other group computes."""
    name = ir.StringAttr(function.attributes["sym_name"]).value
    body = function.regions[0].blocks[0]
    ops = [op.operation for op in body.operations if is_compute(op.operation)]
    terminator = list(body.operations)[-1]
    computed = []
    for value in terminator.operands:
        for piece in pieces(value):
            if isinstance(piece, ir.BlockArgument):
                continue  # passed through: bufferization copies it, a dispatch of its own
            op = piece.owner.operation if isinstance(piece, ir.OpResult) else None
            if op is None or not is_compute(op):
                raise KernelError(f"kernel {name} returns a value it does not compute ({piece.get_name()})")
            if op not in computed:
                computed.append(op)
    if phased:
        computed += [op for op in earlier if op not in computed]
        work = list(computed)
        while work:
            current = work.pop()
            for member in producers(current, through_gathers=False) | {current}:
                for source in gathered(member):
                    if source not in computed:
                        computed.append(source)
                        work.append(source)
    producers_of = {op: producers(op, through_gathers=not phased, stop=set(earlier) - {op}) for op in computed}

    def computed_by(op, other) -> bool:
        return op in producers_of[other] and _computed_whole(op, other, producers_of[other] | {other})

    # A result that another result's tiles compute only in part (LLaMA's queries, whose
    # halves its rotation reads) is a root too: the other computes its own copy.
    roots = [op for op in computed if not any(computed_by(op, other) for other in computed if other != op)]
    groups = []
    taken = set()
    for root in sorted(roots, key=ops.index):
        if static_tensor_type(root.results[0]) is None:
            raise KernelError(f"kernel {name} has a result of dynamic shape")
        members = [op for op in ops if op == root or op in producers_of[root]]
        _move_other_uses_after(members, root)
        _check_read_directly(members, name, set(earlier))
        sources = [source for op in members for source in gathered(op)]
        if sources and not phased:
            raise GatherError(f"kernel {name} gathers from a value it computes ({sources[0].name}): a dispatch "
                              f"computes it first")
        shared = [op for op in members if op in taken]
        if shared:
            members = _own_copies(members, shared)
        taken.update(members)
        groups.append(RootGroup(root, members, _kind(members)))
    ops = [op.operation for op in body.operations if is_compute(op.operation)]
    return Kernel(name, function, ops, groups)


def staged_ops(group: RootGroup, shared_products: bool = False) -> list:
    """The ops of ``group`` computed once per workgroup, into its shared memory, before
    the root's tile (``schedule.py``): those whose values the threads of a consumer
    would otherwise each recompute, the consumer reading them broadcast along one of its
    parallel dims (which the threads share out): a reduction or contraction (a
    softmax's row maximum, read across the row's columns; attention's scores), or an
    element-wise op read along the consumer's reduction (attention's probabilities,
    read by their product with V). ``shared_products``: also a product that several
    ops read (``read_product``: attention's scores, read by the softmax's maximum and
    by its exponentials, each of which would compute it again)."""
    staged = []
    for op in reversed(group.ops):
        if op == group.root:
            continue
        if shared_products and read_product(op, group):
            staged.append(op)
            continue
        for consumer, amap in _readers(op, group):
            parallel, ranges = parallel_loops(consumer), loop_ranges(consumer)
            used = set().union(*(expr_dims(e) for e in amap.results))
            reduced = any(not parallel[d] for d in used)
            broadcast = any(parallel[d] and d not in used and (ranges is None or ranges[d] != 1)
                            for d in range(len(parallel)))  # a unit loop shares nothing out
            if broadcast and (reduced or has_reduction(op)):
                staged.append(op)
                break
    return [op for op in group.ops if op in staged]


def read_product(op, group: RootGroup) -> bool:
    """Whether ``op`` is read by several ops of ``group`` and is a contraction or an
    element-wise op of one (a product's scale and mask)."""
    if len({consumer for consumer, _ in _readers(op, group)}) < 2:
        return False
    members = set(group.ops)
    while not is_contraction(op):
        inputs = [p for p in direct_producers(op) & members if not has_reduction(p) or is_contraction(p)]
        if has_reduction(op) or len(inputs) != 1:
            return False
        op = inputs[0]
    return True


def _readers(op, group: RootGroup) -> list:
    """(consumer, indexing map) of each input of a ``group`` op that reads ``op``'s result."""
    return [(consumer, amap) for consumer in group.ops for value, amap in _inputs_with_maps(consumer)
            if isinstance(value, ir.OpResult) and value.owner == op]


def _inputs_with_maps(consumer) -> list:
    """(value, indexing map) of each input of a ``linalg.generic``; none for another op."""
    if consumer.name != "linalg.generic":
        return []
    return list(zip(linalg_inputs(consumer), indexing_maps(consumer)))


def one_op_per_group(function) -> Kernel:
    """The ``Kernel`` of a kernel function with every compute op a root group of its
    own: no fusion, a dispatch per op, the values between them in buffers (the fallback
    when the fused schedule of a kernel does not apply)."""
    name = ir.StringAttr(function.attributes["sym_name"]).value
    ops = [op.operation for op in function.regions[0].blocks[0].operations if is_compute(op.operation)]
    return Kernel(name, function, ops, [RootGroup(op, [op], _kind([op])) for op in ops])


def _move_other_uses_after(members: list, root):
    """Move the views and inserts before ``root`` that read a fused member's result (a
    DenseNet layer's new features inserted into the concatenation it returns, the same
    features normalized by the root), with every op after them that reads theirs, to
    right after ``root``, unless the root depends on one of them. Fusion yields a fused
    producer's tile out of the root's loop for its other users, which must then come
    after the loop: a user before it would keep the whole producer outside the launch."""
    block = root.block
    order = [op.operation for op in block.operations]
    position = {op: i for i, op in enumerate(order)}
    fused = set(members) - {root}
    moved, escaping = set(), set()
    for op in order[: position[root]]:
        reads = {v.owner.operation for v in op.operands if isinstance(v, ir.OpResult)}
        if reads & moved or (reads & fused and not is_compute(op) and op not in fused):
            moved.add(op)
            escaping |= reads & fused
    if not moved or moved & (_dependencies(root) | {root}) or \
            not all(_computed_whole(op, root, set(members)) for op in escaping):
        return
    anchor = root
    for op in sorted(moved, key=position.get):
        op.move_after(anchor)
        anchor = op


def _check_read_directly(members: list, name: str, earlier: set):
    """A ``KernelError`` when an op of a group reads a value the group computes through a
    view that ``prepare`` could not fold into its map (a slice of a slice of a collapsed
    product: a recurrent step's gate): fusion cannot tile a producer through it, and
    upstream's fusion into a loop has been seen to abort on such a chain rather than fail.
    A value of ``earlier`` is read from its buffer, through the view."""
    for op in members:
        for value in _data_operands(op):
            built = [piece for piece in built_in_place(value) if piece not in earlier]
            if built:
                raise ConcatReadError(f"kernel {name}: {op.name} reads a concatenation that {built[0].name} and "
                                      f"{len(built) - 1} more build in place, which the schedules cannot fuse through")
            source = viewed_op(value)
            if isinstance(value, ir.OpResult) and value.owner.name in VIEWS and source is not None and \
                    is_compute(source) and source.operation not in earlier:
                raise PartialReadError(f"kernel {name}: {op.name} reads {source.name}'s result through "
                                  f"{value.owner.name}, which the schedules cannot fuse through")


def reads_whole(consumer, producer) -> bool:
    """Whether ``consumer`` reads every element of ``producer``'s result: an input whose
    indexing map is loop dims spanning the result's shape (or 0 along a unit dim)."""
    if consumer.name != "linalg.generic":
        return False
    ranges = loop_ranges(consumer)
    for value, amap in _inputs_with_maps(consumer):
        if not (isinstance(value, ir.OpResult) and value.owner == producer) or ranges is None:
            continue
        shape = static_tensor_type(value).shape
        if all((isinstance(e, ir.AffineDimExpr) and ranges[ir.AffineDimExpr(e).position] == size) or
               (size == 1 and isinstance(e, ir.AffineConstantExpr)) for e, size in zip(amap.results, shape)):
            return True
    return False


def _computed_whole(op, root, members: set) -> bool:
    """Whether the tiles of ``root`` compute all of ``op``'s result, fused into them: a
    chain of consumers among ``members`` from ``op`` to ``root``, each reading the whole
    of its producer (fusion computes a producer only where its consumer reads it)."""
    seen, work = {op}, [op]
    while work:
        current = work.pop()
        if current == root:
            return True
        for consumer in members - seen:
            if reads_whole(consumer, current):
                seen.add(consumer)
                work.append(consumer)
    return False


def _dependencies(op) -> set:
    """Every op of the function whose result ``op`` reads, transitively, through any
    operand or in its body."""
    seen, work = set(), [op]
    while work:
        current = work.pop()
        direct = [v.owner.operation for v in current.operands if isinstance(v, ir.OpResult)]
        for owner in direct + _captured_producers(current):
            if owner not in seen:
                seen.add(owner)
                work.append(owner)
    return seen


def _own_copies(members: list, shared: list) -> list:
    """``members`` (a root group's ops, in program order) with each of ``shared`` (ops an
    earlier group also computes: a merged projection under three heads' transposes)
    replaced by a copy that only this group's ops read. Fusion yields a fused producer's
    result to the producer's other users, and a group computes only the part of a shared
    producer that its root needs."""
    copies = {}
    for op in members:
        if op not in shared:
            continue
        with ir.InsertionPoint(op), op.location:
            clone = op.clone()
        copies[op] = clone
    result = []
    for op in members:
        own = copies.get(op, op)
        for index, value in enumerate(own.operands):
            owner = value.owner.operation if isinstance(value, ir.OpResult) else None
            if owner in copies:
                own.operands[index] = copies[owner].results[value.result_number]
        result.append(own)
    return result


__all__ = ["FALLBACK_ATTR", "SCHEDULE_ATTR", "WORKGROUP_SIZE_ATTR", "ConcatReadError", "GatherError", "Kernel",
           "KernelError", "PartialReadError", "PhaseError", "RootGroup", "reads_whole", "analyze", "built_in_place",
           "gathered", "expr_dims", "has_reduction", "one_op_per_group", "is_compute", "is_contraction",
           "loop_ranges", "pieces", "direct_producers", "producers", "read_product", "staged_ops", "viewed_op"]
