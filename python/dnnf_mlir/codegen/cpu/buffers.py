"""Transform scripts that run after bufferization: the copies it left, and the
lowering of vectors to what LLVM takes.

``post_bufferization_script`` vectorizes the copies that are left (packing buffers,
padded operands, padded results), hoists redundant transfers and lowers vector masks;
``vector_lowering_script`` finally lowers ``vector.contract`` -> outer products ->
FMAs and n-D transfers to 1-D ones (a fixed script: ``lowering/cpu/vector-lowering.mlir``).
"""

from __future__ import annotations

import math

from ...lowering import read_transform_library
from .target import CpuTarget
from ..transform_script import Script
from .tiles import PARALLEL_MIN_ELEMENTS


def post_bufferization_script(target: CpuTarget, copies, threads: int = 1) -> str:
    """Vectorize copies, hoist accumulators on buffers, lower vector masks.

    ``copies`` lists ``(tag, static shape)`` of the ``linalg.copy`` ops on memrefs that
    bufferization left (packing buffers, padded operands, results copied out): each is
    tiled to rows and vectorized, masked for the remainder of a row; big ones are
    first split among the threads.
    """
    s = Script()
    lanes = target.lanes(32)
    for tag, shape in copies:
        h = s.match(["linalg.copy"], tag=tag)
        arg = s.begin_suppressed(h)
        width = min(shape[-1], 8 * lanes)
        sizes = [1] * (len(shape) - 1) + [width]
        t = arg
        if threads > 1 and math.prod(shape) >= PARALLEL_MIN_ELEMENTS:
            outer = [d for d in range(len(shape) - 1) if shape[d] >= threads]
            if outer:
                split = [0] * len(shape)
                split[outer[0]] = math.ceil(shape[outer[0]] / threads)
                t, _ = s.tile_forall(t, split)
        if len(shape) > 1 or width < shape[-1]:
            t, _ = s.tile_for(t, sizes)
        s.vectorize(t, sizes)
        s.end_nested()
    func = s.match_func()
    hoisted = s.fresh("func")
    s.emit(f"{hoisted} = transform.structured.hoist_redundant_vector_transfers {func} : (!transform.any_op) -> !transform.any_op")
    func = hoisted
    # Masked transfers (row remainders) become transfers with a mask operand before the
    # deallocation pipeline canonicalizes: vector.mask regions must hold one op only.
    s.patterns(func, ["vector.lower_masked_transfers", "vector.lower_masks"])
    return s.text("__dnnf_vectorize_buffers")


def vector_lowering_script() -> str:
    """vector.contract -> outer products -> FMAs; n-D transfers -> 1-D loads/stores: the
    transform library ``lowering/cpu/vector-lowering.mlir`` (``@__dnnf_lower_vectors``)."""
    return read_transform_library("cpu/vector-lowering.mlir")


__all__ = ["post_bufferization_script", "vector_lowering_script"]
