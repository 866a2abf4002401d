"""Which loops of a thread the GPU schedule unrolls: the innermost ones of a few
constant iterations (a register tile's rows), tagged here and unrolled by
``schedule.vectorize``; and, in the device code, the loops over a private array that
an op which did not vectorize left (``unroll_private_array_loops``).
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..passes import apply_script, run_passes
from ..transform_script import TAG, Script
from .loop_budget import trip_count
from .mapping import PRIVATE

UNROLL = 4  # the most iterations of a thread's innermost loop that are unrolled
# on a loop over a matmul thread's rows (``schedule``), unrolled up to ``GpuDevice.matmul_rows``
REGISTER_ROWS_ATTR = "dnnf.gpu.register_rows"


def mark_unrolled_loops(module, matmul_rows: int = UNROLL) -> list:
    """Tag (``TAG`` ``unrolled_tag(n)``) each innermost ``scf.for`` of ``n`` <= ``UNROLL``
    constant iterations, or ``n`` <= ``matmul_rows`` for a loop over a matmul thread's rows
    (``REGISTER_ROWS_ATTR``: in its reduction loop and in its epilogue after it; never
    the reduction loop itself), innermost or around one loop over its two vec4s of
    columns (unrolled first: smaller trip counts go first): a thread's rows of its register
    tile, unrolled, are read and written at constant offsets, which ``vectorize`` then
    keeps in registers across the reduction loop around them (a loop-invariant subset)
    instead of a private array indexed at run time (spilled to memory on a GPU,
    gathered per lane on lavapipe). Returns the trip counts tagged."""
    trips = set()
    for loop in walk_ops(module.operation, {"scf.for"}):
        nested = walk_ops(loop, {"scf.for"})
        if nested != [loop] and not (REGISTER_ROWS_ATTR in loop.attributes and len(nested) == 2):
            continue  # not innermost, nor a thread's rows around its vec4s of columns
        count = trip_count(loop)
        if count is not None and 1 < count <= (max(UNROLL, matmul_rows) if REGISTER_ROWS_ATTR in loop.attributes else UNROLL):
            loop.attributes[TAG] = ir.StringAttr.get(unrolled_tag(count))
            trips.add(count)
    return sorted(trips)


def _indexes_private_array(loop) -> bool:
    """Whether ``loop``'s body loads or stores a private array (``memref.alloca``) at
    an index its induction variable gives."""
    iv = loop.regions[0].blocks[0].arguments[0]
    for access in walk_ops(loop, {"memref.load", "memref.store"}):
        memref, *indices = list(access.operands)[1 if access.name == "memref.store" else 0:]
        owner = memref.owner if isinstance(memref, ir.OpResult) else None
        if owner is not None and owner.name == "memref.alloca" and iv in indices:
            return True
    return False


def unroll_private_array_loops(module) -> int:
    """Unroll each innermost ``scf.for`` of at most ``UNROLL`` constant iterations that
    indexes a private array by its induction variable. An op that did not vectorize (a
    convolution's padded window, read as a gather) becomes loops over a thread's vec4 of
    accumulators kept in such an array; indexed at run time, a driver may keep it in
    memory (NVIDIA's Vulkan driver did: DenseNet's convolutions ran 2.2x slower there
    than the same loops printed as OpenCL C). Unrolled, every access is at a constant
    offset, and ``split_private_arrays`` makes scalars of the array, which stay in
    registers. Returns how many loops were unrolled."""
    by_count = {}
    for loop in walk_ops(module.operation, {"scf.for"}):
        count = trip_count(loop)
        if walk_ops(loop, {"scf.for"}) == [loop] and count is not None and 1 < count <= UNROLL \
                and _indexes_private_array(loop):
            loop.attributes[TAG] = ir.StringAttr.get(unrolled_tag(count))
            by_count[count] = by_count.get(count, 0) + 1
    if by_count:
        s = Script()
        for count in sorted(by_count):
            s.unroll(s.match(["scf.for"], tag=unrolled_tag(count)), count)
        apply_script(module, s.text(), "__dnnf_codegen", "unrolling the loops over private arrays")
    return sum(by_count.values())


def split_private_arrays(module):
    """Split each private array accessed only at constant offsets (after
    ``unroll_private_array_loops`` and ``storage.vectorize_storage``, which makes its
    vector accesses scalar ones) into one private scalar per element (``sroa``, which
    drops the memory space: its scalars get the array's back)."""
    run_passes("canonicalize,sroa", module)  # constant offsets folded first
    _order_by_first_use(walk_ops(module.operation, {"memref.alloca"}), module)
    private = ir.Attribute.parse(PRIVATE)
    for alloca in walk_ops(module.operation, {"memref.alloca"}):
        memref = ir.MemRefType(alloca.results[0].type)
        if memref.memory_space is None:
            alloca.results[0].set_type(ir.MemRefType.get(memref.shape, memref.element_type, memory_space=private))


def _order_by_first_use(allocas: list, module):
    """Put the operand-free ``allocas`` of each block first in it, in the order of their
    first use in ``module``: ``sroa`` creates an array's scalars in the order of a set of
    pointers, which differs from run to run, and the SPIR-V variables' ids with it."""
    position = {}

    def number(op):
        position[op] = len(position)
        return ir.WalkResult.ADVANCE

    module.operation.walk(number)
    by_block = {}
    for alloca in allocas:
        if not list(alloca.operands):
            by_block.setdefault(alloca.block, []).append(alloca)
    for block, in_block in by_block.items():
        in_block.sort(key=lambda a: min(((position[u.owner], u.operand_number) for u in a.results[0].uses),
                                        default=(len(position), 0)))
        for alloca in reversed(in_block):
            alloca.move_before(block.operations[0])


def unrolled_tag(count: int) -> str:
    """The ``TAG`` of a loop of ``count`` iterations to unroll."""
    return f"unroll{count}"


__all__ = ["REGISTER_ROWS_ATTR", "UNROLL", "mark_unrolled_loops", "split_private_arrays", "unroll_private_array_loops",
           "unrolled_tag"]
