"""``dnnf-cpu-buffer-arena``: the entry function's intermediate buffers placed in one
arena per call, each kernel's output in the block freed most recently.

After bufferization an entry function allocates one buffer per kernel output and frees
them all at its end (the deallocation pipeline frees a buffer at the end of its block,
not after its last reader), so every call touches the sum of all intermediates (12 MB
in SqueezeNet) and each kernel writes memory last touched a whole call ago: its stores
miss the caches (write-allocate), and a small memory-bound kernel runs up to 1.7x
slower than with an output still in L2 (measured on Zen 4). Here, as onnxruntime's
memory pattern planner and TVM's storage rewrite do, each such buffer becomes a
``memref.view`` at a fixed offset of one ``memref.alloc`` of bytes:

- a buffer lives from its allocation to the last top-level op that uses it or a view,
  cast or loop result derived from it (a use nested in a loop counts as the loop's);
- buffers are placed in allocation order; the ones dead before an allocation are free,
  and a buffer takes the start of the block read most recently among those it fits
  (LIFO: the inputs the previous kernels just read, still in cache), not the lowest;
  where none fits, the hottest run of adjacent free blocks it fits, merged; where none
  does either, the arena grows at its end;
- the arena stays below glibc's mmap threshold (``MMAP_THRESHOLD_BYTES``, what the model
  library and the JIT set): a bigger one would be mapped and page-faulted on every
  call; a buffer that would grow it past that keeps its own allocation, and so does one
  with dynamic sizes, a non-identity layout, elements not whole bytes, or one that is
  returned, freed elsewhere or not freed by the function.

The arena is allocated per call, not per loaded model: ``dnnf_run`` is reentrant
(``c_glue.py``), so concurrent calls must not share it. One malloc replaces dozens, and
glibc hands back the same block every call. Runs on memrefs after the deallocation
pipeline (``cpu/deallocate.pipeline``), on the CPU backend only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import ancestor_in_block, block_positions
from ...kernel_functions import is_public
from ...transforms.pass_base import ModulePass
from ...transforms.registry import described_by_table
from .heap_settings import MMAP_THRESHOLD_BYTES

# The largest arena: below that threshold with the alignment's padding and malloc's header.
ARENA_LIMIT_BYTES = MMAP_THRESHOLD_BYTES - 4096
ARENA_ALIGNMENT = 64  # a cache line: every buffer starts on one, as AVX-512 stores like


@dataclass
class Buffer:
    """One ``memref.alloc`` of the entry block and its lifetime in op positions."""

    alloc: ir.Operation
    size: int  # bytes, rounded up to ARENA_ALIGNMENT
    start: int
    end: int
    deallocs: list = field(default_factory=list)
    offset: int = -1  # in the arena; -1: keeps its own allocation


@dataclass
class FreeBlock:
    offset: int
    size: int
    freed_at: int  # the position of the last op that used it: a later one is hotter


def byte_size(memref_type: ir.MemRefType) -> int:
    """Bytes of a static, identity-layout memref of whole-byte elements, else 0."""
    element = memref_type.element_type
    width = element.width if isinstance(element, (ir.IntegerType, ir.FloatType)) else 0
    identity = memref_type.layout == ir.AffineMapAttr.get(ir.AffineMap.get_identity(memref_type.rank))
    whole_bytes = width and not width % 8
    if not memref_type.has_static_shape or not identity or memref_type.memory_space is not None or not whole_bytes:
        return 0
    return math.prod(memref_type.shape) * width // 8


def _lifetime(alloc: ir.Operation, position: dict) -> "Buffer | None":
    """The buffer of ``alloc`` (an op of the entry block that ``position`` numbers) with its
    lifetime, or None when it cannot move into the arena."""
    size = byte_size(ir.MemRefType(alloc.results[0].type))
    if not size or len(alloc.operands):
        return None
    buffer = Buffer(alloc, -(-size // ARENA_ALIGNMENT) * ARENA_ALIGNMENT, position[alloc], position[alloc])
    aliases, seen = [alloc.results[0]], set()
    while aliases:
        value = aliases.pop()
        for use in value.uses:
            owner = use.owner
            top = ancestor_in_block(owner, alloc.block)
            if owner.name == "memref.dealloc" and value == alloc.results[0] and top == owner.operation:
                buffer.deallocs.append(owner)
                continue
            if owner.name in ("func.return", "memref.dealloc", "bufferization.dealloc"):
                return None  # returned, or freed where the plan does not see it
            buffer.end = max(buffer.end, position[top])
            if position[top] not in seen:  # its results may be views of the buffer, or the buffer out of a loop
                seen.add(position[top])
                aliases += [result for result in top.results if isinstance(result.type, ir.MemRefType)]
    return buffer if buffer.deallocs else None


def _runs(free: list) -> list:
    """The free blocks in runs of adjacent ones, by offset."""
    runs = []
    for block in sorted(free, key=lambda b: b.offset):
        if runs and runs[-1][-1].offset + runs[-1][-1].size == block.offset:
            runs[-1].append(block)
        else:
            runs.append([block])
    return runs


def _merge(free: list, run: list) -> FreeBlock:
    for block in run:
        free.remove(block)
    merged = FreeBlock(run[0].offset, sum(b.size for b in run), max(b.freed_at for b in run))
    free.append(merged)
    return merged


def _take(free: list, buffer: Buffer, top: int) -> int:
    """Place ``buffer`` at the start of the hottest free block it fits; else of the hottest
    run of adjacent free blocks it fits, merged; else at the arena's end (growing the run
    that ends there). Returns the arena's new end."""
    fitting = [b for b in free if b.size >= buffer.size]
    runs = _runs(free)
    fitting_runs = [run for run in runs if sum(b.size for b in run) >= buffer.size]
    if fitting:
        block = max(fitting, key=lambda b: (b.freed_at, -b.offset))
    elif fitting_runs:
        block = _merge(free, max(fitting_runs, key=lambda run: max(b.freed_at for b in run)))
    else:
        tail = [run for run in runs if run[-1].offset + run[-1].size == top]
        block = _merge(free, tail[0]) if tail else FreeBlock(top, 0, 0)
        if not tail:
            free.append(block)
        top = block.offset + buffer.size
        block.size = buffer.size
    buffer.offset = block.offset
    block.offset += buffer.size
    block.size -= buffer.size
    if not block.size:
        free.remove(block)
    return top


def plan_offsets(buffers: list, limit: int = ARENA_LIMIT_BYTES) -> int:
    """Set each buffer's ``offset`` (hot-first, see the module docstring); returns the
    arena's size. ``buffers`` are in allocation order."""
    free, live, top = [], [], 0
    for buffer in buffers:
        for dead in [b for b in live if b.end < buffer.start]:
            live.remove(dead)
            free.append(FreeBlock(dead.offset, dead.size, dead.end))
        trial = [FreeBlock(b.offset, b.size, b.freed_at) for b in free]
        new_top = _take(trial, buffer, top)
        if new_top > limit:
            buffer.offset = -1
            continue
        free[:], top = trial, new_top
        live.append(buffer)
    return top


def place_in_arena(func: ir.Operation) -> int:
    """Move ``func``'s plannable entry-block buffers into one arena; returns its size."""
    block = func.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    position = block_positions(block)
    buffers = [b for op in ops if op.name == "memref.alloc" for b in [_lifetime(op, position)] if b]
    size = plan_offsets(buffers)
    placed = [b for b in buffers if b.offset >= 0]
    if len(placed) < 2:
        return 0
    memref, arith = _mlir.memref, _mlir.arith
    with ir.InsertionPoint(ops[0]), func.location:
        arena = memref.alloc(ir.MemRefType.get([size], ir.IntegerType.get_signless(8)), [], [],
                             alignment=ARENA_ALIGNMENT)
    for buffer in placed:
        with ir.InsertionPoint(buffer.alloc), buffer.alloc.location:
            offset = arith.constant(ir.IndexType.get(), buffer.offset)
            view = memref.view(buffer.alloc.results[0].type, arena, offset, [])
        buffer.alloc.results[0].replace_all_uses_with(view)
        for dealloc in buffer.deallocs:
            dealloc.erase()
        buffer.alloc.erase()
    with ir.InsertionPoint(block.operations[len(block.operations) - 1]), func.location:
        memref.dealloc(arena)
    return size


def place_buffers_in_arenas(module: ir.Operation):
    """``place_in_arena`` on every public function of one block (before the control flow
    of loops becomes blocks) of ``module``, a ``builtin.module`` operation."""
    with module.context:
        for op in module.regions[0].blocks[0].operations:
            func = op.operation
            if func.name == "func.func" and is_public(func) and len(func.regions[0].blocks) == 1:
                place_in_arena(func)


@described_by_table
class BufferArenaPass(ModulePass):
    NAME = "dnnf-cpu-buffer-arena"

    def run(self, module):
        place_buffers_in_arenas(module)


__all__ = ["ARENA_ALIGNMENT", "ARENA_LIMIT_BYTES", "BufferArenaPass", "byte_size", "place_buffers_in_arenas",
           "place_in_arena", "plan_offsets"]
