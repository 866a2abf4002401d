"""gather_sum: a weighted sum of rows picked by index, the interpolation of GridSample.

``output[q..., c] = sum over t of weights[t, q...] * data[indices[t, q...], c]``: each
output row is a few rows of ``data`` (its taps, ``t`` in order), weighted. As one op the
taps are weighted as they are read, where a ``gather`` of every tap followed by ``mul``
and ``reduce_sum`` wrote all of them to memory first (a One-to-Many op before a
reduction is a fusion break in Table 3). An output row depends on rows of the input
chosen at run time: Many-to-Many. The sum is linear in ``data`` only; it declares no
algebra (no rewrite would move an op across its three operands).

The indices are the importer's (``frontend/onnx_grid_sample.py``), clamped into
``[0, rows)`` when they are computed: they are not checked at run time.
"""

import numpy as np

from ..base import ECGOp, Tensor, TensorResult
from ..properties import NO_ALGEBRA, MappingType
from ..shapes import require


class GatherSumOp(ECGOp, name="gather_sum"):
    """The rows ``data[indices[t]]`` weighted by ``weights[t]`` and summed over the taps ``t``
    (the leading axis of ``indices`` and ``weights``): [rows, C], [T, Q...], [T, Q...] -> [Q..., C]."""

    data: Tensor
    indices: Tensor
    weights: Tensor
    output: TensorResult
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = NO_ALGEBRA
    ONNX = ()

    @classmethod
    def infer(cls, operands, attrs):
        data, indices, weights = operands
        require(data.rank == 2 and data.is_float, f"data must be a 2-d float tensor, got {data}")
        require(indices.dtype == np.dtype(np.int64), f"indices must be i64, got {indices}")
        require(indices.rank >= 2, f"indices must have a tap axis and at least one more, got {indices}")
        require(weights.shape == indices.shape and weights.dtype == data.dtype,
                f"weights {weights} must have the shape of the indices {indices} and the type of the data {data}")
        return [data.with_shape(indices.shape[1:] + data.shape[1:])]

    @classmethod
    def count_flops(cls, operands, results, attrs) -> int:
        return 2 * operands[1].shape[0] * results[0].numel  # a multiply and an add per tap and element

    @classmethod
    def reference(cls, inputs, attrs, results):
        data, indices, weights = inputs
        if not ((indices >= 0) & (indices < data.shape[0])).all():
            raise IndexError(f"gather_sum index out of range [0, {data.shape[0]})")
        total = np.zeros(results[0].shape, data.dtype)
        for tap in range(indices.shape[0]):  # in tap order, in the data's type: as the lowering sums
            total = total + weights[tap][..., None] * data[indices[tap]]
        return [total]
