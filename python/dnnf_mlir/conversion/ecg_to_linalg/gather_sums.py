"""``ecg.gather_sum`` as one ``linalg.generic``: the taps weighted as they are read.

Loops (tap, q..., channel), the tap a reduction: each output row adds ``weight * data
row`` for its taps in order into its accumulator. ``data`` is read through its 1-d view
at ``index * C + channel``: along the innermost loop (channels) a vector load of a whole
row (``flat_reads``); the index and weight are read once per row. The CPU schedule
(``codegen/cpu/gather_sums.py``) keeps the tap loop inside each row's vector.
"""

from ..._mlir import arith, ir
from ...linalg_builders import affine_map, element_of, generic
from .builders import index, loop_indices, shape_of, zeros
from .flat_reads import flat_reader
from .registry import lowers


@lowers("gather_sum")
def lower_gather_sum(op, args):
    """out[q..., c] = sum_t weights[t, q...] * data[indices[t, q...], c] (indices clamped into the rows)."""
    data, indices, weights = args
    (spec,) = op.result_specs
    rows = shape_of(data)[0]
    rank = len(shape_of(indices)) + 1  # (tap, q..., channel)
    tap_map = affine_map(rank, range(rank - 1))
    read = flat_reader(data, contiguous=True)

    def body(raw, weight, total):
        position = arith.index_cast(ir.IndexType.get(), raw)
        position = arith.minsi(arith.maxsi(position, index(0)), index(rows - 1))
        return arith.addf(total, arith.mulf(weight, read([position, loop_indices(rank)[-1]])))

    return generic([indices, weights], [tap_map, tap_map, affine_map(rank, range(1, rank))],
                   [zeros(spec.shape, element_of(data))], body, ["reduction"] + ["parallel"] * (rank - 1))
