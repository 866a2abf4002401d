"""The last level of the GPU schedule (``schedule.py``): what is left in a thread, a row
of at most ``VECTOR`` elements (or a stepped matmul's tile), vectorized as 1-d vectors
that SPIR-V and OpenCL C take, its unit dims folded first.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..transform_script import Script
from .contraction_steps import STEPPED_ATTR
from .kernels import loop_ranges
from .tilings import VECTOR
from .unrolling import unrolled_tag

VECTORIZE_ATTR = "dnnf.gpu.vectorize"


def _reads_flat_view(op) -> bool:
    """Whether ``op``'s body reads a 1-d tensor at a computed index (a gather through the
    source's 1-d view: Gather, GatherElements, GridSample, Resize's taps): vectorized,
    such a read may become a vector.gather, which neither SPIR-V nor OpenCL C takes."""
    return any(inner.name == "tensor.extract" and len(inner.operands) == 2
               for inner in op.regions[0].blocks[0].operations)


def mark_vectorizable(module) -> int:
    """Mark the ``linalg.generic`` ops that vectorize into what SPIR-V takes: at most one
    loop above 1, of at most ``VECTOR`` iterations (a 1-d vector of 2 to 4 lanes, or a
    scalar). Others (a producer read through a strided window, 5 wide for 3 outputs)
    stay scalar loops, and so do gathers from a 1-d view (``_reads_flat_view``). Returns
    how many."""
    marked = 0
    for op in walk_ops(module.operation, {"linalg.generic"}):
        ranges = loop_ranges(op)
        if ranges is None or _reads_flat_view(op):
            continue
        wide = [r for r in ranges if r != 1]
        if len(wide) <= 1 and all(r <= VECTOR for r in wide):
            op.attributes[VECTORIZE_ATTR] = ir.UnitAttr.get()
            marked += 1
    return marked


def vectorize(s: Script, unrolled=()):
    """Unroll the loops ``mark_unrolled_loops`` tagged (their ``unrolled`` trip
    counts), vectorize the ops ``mark_vectorizable`` and ``mark_stepped`` marked (after
    the unit dims of every op are folded away) as 1-d vectors, lower contractions to
    FMAs, and keep accumulators in registers. Only marked linalg ops: the ``tensor.insert_slice`` of a
    concatenation's pieces must stay, for bufferization to write each piece in place."""
    for count in unrolled:
        s.unroll(s.match(["scf.for"], tag=unrolled_tag(count)), count)
    stepped, stepped_loops = s.fresh("stepped"), s.fresh("stepped_loops")
    s.emit(f'{stepped} = transform.structured.match ops{{["linalg.generic"]}} attributes{{{STEPPED_ATTR}}} in %root'
           " : (!transform.any_op) -> !transform.any_op")
    # A reduction of one step (K = ``K_STEP``) has no loop left: allow_empty_results.
    s.emit(f'{stepped_loops} = transform.get_parent_op {stepped} {{allow_empty_results, deduplicate, op_name = "scf.for"}}'
           " : (!transform.any_op) -> !transform.any_op")
    marked, ops = s.fresh("marked"), s.fresh("vectorizable")
    s.emit(f'{marked} = transform.structured.match ops{{["linalg.generic"]}} attributes{{{VECTORIZE_ATTR}}} in %root'
           " : (!transform.any_op) -> !transform.any_op")
    s.emit(f"{ops} = transform.merge_handles {marked}, {stepped} : !transform.any_op")
    each = s.begin_foreach(ops)
    attempt = s.begin_suppressed(each)  # an op that does not vectorize stays scalar loops
    s.vectorize(attempt)
    s.end_nested()
    s.end_nested()
    # In three rounds: a stepped matmul's broadcast of A must be a vector.broadcast
    # (transfer permutations) and its fp16 widenings after the transpose of B^T (sink_ops,
    # in its loops only: elsewhere it would compute on 0-d vectors, which SPIR-V lacks)
    # before they fold into a contraction with B, and that contraction must be whole
    # before it is lowered, or it becomes dot products.
    func = s.match_func()
    s.patterns(func, [
        "vector.cast_away_vector_leading_one_dim",
        "vector.drop_unit_dims_with_shape_cast",
        "vector.transfer_permutation_patterns",
        "canonicalization",
    ])
    s.patterns(stepped_loops, ["vector.sink_ops", "canonicalization"])
    s.patterns(func, ["vector.reduction_to_contract", "vector.fold_arith_extension", "canonicalization"])
    s.patterns(func, [
        'vector.lower_contraction lowering_strategy = "outerproduct"',
        "vector.lower_outerproduct",
        "canonicalization",
    ])
    # Loop-invariant code motion and register accumulators in the scf.for loops of a
    # thread, never out of the scf.forall loops (that would move work out of the launch).
    loops = s.match(["scf.for"])
    s.emit(f"transform.apply_licm to {loops} : !transform.any_op")
    s.emit(f"transform.loop.hoist_loop_invariant_subsets {loops} : !transform.any_op")
    s.canonicalize(s.match_func())


def fold_unit_dims(s: Script):
    """Fold the unit dims of every op away (a thread's ops then iterate over one row),
    and give each op in a loop an empty init of its own (a slice of a function's empty
    tensor would let bufferization compute a thread's intermediate in the buffer a
    workgroup shares). Outside the loops a slice of an empty tensor stays: a
    concatenation's first piece is computed in place in its result through it."""
    s.patterns(s.match_func(), ["linalg.fold_unit_extent_dims_via_slices", "canonicalization"])
    s.patterns(s.match(["scf.forall"]), ["tensor.fold_tensor_empty"])


__all__ = ["VECTORIZE_ATTR", "fold_unit_dims", "mark_vectorizable", "vectorize"]
