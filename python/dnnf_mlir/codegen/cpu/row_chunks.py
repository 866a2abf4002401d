"""Long rows of a row group in chunks: a loop over vectors instead of one row vector.

A row group (``row_fusion.py``) vectorizes each op of its loop body a whole row at a
time. A row longer than the register file holds (a 512-long softmax: 32 AVX-512
registers, 64 AVX2 ones; BERT's 768-long layer norms) then lives on the stack, and
LLVM's code for the spilled n-D vectors (and for loop-invariant ones, such as a layer
norm's scale and shift, hoisted out of the row loop) is slow: BERT's add + layer norm
reached 36-56% of STREAM. Instead each reduction of the row and the group's root
become loops over chunks of ``chunk_width`` elements: a reduction's chunks accumulate
into a vector (``tile_reduction_using_for``) reduced horizontally once per row, and
the cheap element-wise ops that feed a loop are fused into it, recomputed there from
the row's inputs, which the first pass left in L1 (a layer norm's residual add: three
times). A costly one (a softmax's exp) gets a chunk loop of its own instead and its
row is stored, in a row buffer, for the loops that read it: the three passes of
onnxruntime's softmax (max; exp, stored, and sum; scale).
"""

from __future__ import annotations

from typing import Optional

from ..._mlir import ir
from ..linalg_queries import parallel_loops, producer, static_tensor_type
from ..transform_script import TAG

CHUNK_VECTORS = 4  # a chunk's vectors: enough independent accumulators to hide the add latency
MIN_CHUNKED_VECTORS = 24  # rows of more vectors than this are computed in chunks


def chunk_width(row: int, lanes: int) -> Optional[int]:
    """Elements per chunk of a ``row``-long row, or None to keep it whole: a row of at
    most ``MIN_CHUNKED_VECTORS`` vectors fits in registers; a longer one is cut in
    chunks of ``CHUNK_VECTORS`` vectors, or of the largest multiple of ``lanes`` / 2
    below that dividing the row (static tiles, no mask), or kept whole if none does."""
    if row <= MIN_CHUNKED_VECTORS * lanes:
        return None
    step = max(lanes // 2, 1)
    for width in range(CHUNK_VECTORS * lanes, lanes - 1, -step):
        if row % width == 0:
            return width
    return None


# An element-wise op whose body has at least this many ops (an exp, expanded into its
# polynomial by then: 30) is stored once, in a chunk loop of its own, rather than
# recomputed in each loop that reads it: a softmax's second exp cost more than
# storing the row and reading it back from L1.
COSTLY_BODY_OPS = 16


def _is_row_elementwise(op, rank: int) -> bool:
    shape = static_tensor_type(op.results[0]).shape
    return op.name == "linalg.generic" and len(shape) == rank and all(parallel_loops(op) or [False])


def is_costly(op) -> bool:
    """Whether ``op``'s body has ``COSTLY_BODY_OPS`` ops or more."""
    return len(op.regions[0].blocks[0].operations) >= COSTLY_BODY_OPS


def elementwise_feeders(op, members: list, rank: int) -> list:
    """The row-shaped element-wise ``members`` that ``op`` reads, directly or through
    each other (not through reductions, nor past a costly op: it is stored), in
    program order."""
    inside = {m for m in members if _is_row_elementwise(m, rank)}
    found, stack = set(), [op]
    while stack:
        for value in stack.pop().operands:
            p = producer(value)
            if p in inside and p not in found and not is_costly(p):
                found.add(p)
                stack.append(p)
    return [m for m in members if m in found]


def schedule_chunks(s, group, tiled_root: str, row_loop: str, tags: dict, width: int):
    """Cut the row of ``tiled_root`` (in ``row_loop``, the group fused in; ``tags``: op ->
    its tag) into chunk loops of ``width``: the root's, then each reduction's and each
    costly element-wise op's (last first), each with the cheap element-wise ops it
    reads fused in, consumers first. An op also read elsewhere is cloned into the
    loop; the clone is retagged so that the next match by tag finds the original only.
    The fusion into the row loop left a copy of an op per use: CSE first makes them one."""
    rank = len(group.shape)
    sizes = [0] * (rank - 1) + [width]
    s.emit(f"transform.apply_patterns to {s.parent_func(row_loop)} {{}} {{apply_cse}} : !transform.any_op")
    _, chunks = s.tile_for(tiled_root, sizes)
    _fuse_feeders(s, group.root, group.members, tags, row_loop, chunks[0], rank)
    for op in reversed(group.members):
        stored = _is_row_elementwise(op, rank) and is_costly(op)
        if op.name != "linalg.reduce" and not stored:
            continue
        # The originals of ops fused before, now unused, would count as uses after the
        # loop (fusion then makes the loop yield them too, which scf.for fails at).
        s.eliminate_dead_code(row_loop)
        handle = s.match([op.name], within=row_loop, tag=tags[op])
        loop = s.tile_for(handle, sizes)[1][0] if stored else tile_reduction_for(s, handle, sizes)
        _fuse_feeders(s, op, group.members, tags, row_loop, loop, rank)


def _fuse_feeders(s, op, members: list, tags: dict, row_loop: str, loop: str, rank: int):
    for feeder in reversed(elementwise_feeders(op, members, rank)):
        fused, _ = s.fuse_into(s.match([feeder.name], within=row_loop, tag=tags[feeder]), loop)
        s.annotate(fused, TAG, f"{tags[feeder]}.chunk")


def give_stored_rows_own_destinations(group, rank: int):
    """Give each stored (costly) element-wise op of ``group`` a destination of its own
    (a clone of its ``tensor.empty``) where it shares one with another op. Fused into
    the row loop, an op writing the root's destination writes the output's row, which
    the root then overwrites while the stored values are still to be read: so
    bufferization copied the output's row to a buffer first, every row."""
    for op in group.members:
        if not (_is_row_elementwise(op, rank) and is_costly(op)):
            continue
        destination = op.operands[len(op.operands) - 1]
        empty = producer(destination)
        if empty is not None and empty.name == "tensor.empty" and len(list(destination.uses)) > 1:
            op.operands[len(op.operands) - 1] = empty.clone(ir.InsertionPoint(empty)).results[0]


def tile_reduction_for(s, handle: str, sizes) -> str:
    """Tile the reduction dims of ``handle`` by ``sizes`` into an scf.for accumulating
    a partial result of a tile's shape, combined after the loop; the loop's handle."""
    fill, split, combine, loop = s.fresh("fill"), s.fresh("split"), s.fresh("combine"), s.fresh("loop")
    s.emit(f"{fill}, {split}, {combine}, {loop} = transform.structured.tile_reduction_using_for {handle} "
           f"by tile_sizes = {list(sizes)} : (!transform.any_op) -> "
           "(!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)")
    return loop


__all__ = ["CHUNK_VECTORS", "COSTLY_BODY_OPS", "MIN_CHUNKED_VECTORS", "chunk_width", "elementwise_feeders",
           "give_stored_rows_own_destinations", "is_costly", "schedule_chunks", "tile_reduction_for"]
