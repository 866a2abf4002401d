"""TopK: the ``k`` largest (or smallest) elements along an axis, sorted, and their indices.

Ties go to the lower index first (as ONNX specifies); NaN counts as greater than every
number and equal to itself, as in onnxruntime: the largest start with the NaNs, the
smallest end with them. The op selects rather than combines (no FLOPs besides the
comparisons) and an output element depends on the whole row: Many-to-Many.
"""

import numpy as np

from ..attributes import Int
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import normalize_axis, require
from ..tensor_spec import TensorSpec


class TopKOp(ECGOp, name="top_k"):
    """values, indices = the ``k`` best elements along ``axis`` (``largest``: the greatest),
    best first, and their positions along ``axis`` (i64)."""

    input: Tensor
    values: TensorResult
    indices: TensorResult
    axis: Int
    k: Int
    largest: Int
    MAPPING = MappingType.MANY_TO_MANY
    ONNX = ("TopK",)
    DEFAULTS = {"axis": -1, "largest": 1}
    # The element types it takes (the lowering compares them with arith directly).
    TYPES = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                        np.uint8, np.uint16, np.uint32, np.uint64))

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(x.rank >= 1, f"input must have rank >= 1, got {x}")
        require(x.dtype in cls.TYPES, f"input must be a float16/32/64 or integer tensor, got {x}")
        axis = normalize_axis(attrs["axis"], x.rank)
        k = attrs["k"]
        require(1 <= k <= x.shape[axis], f"k = {k} must lie in [1, {x.shape[axis]}] (the extent of axis {axis})")
        shape = list(x.shape)
        shape[axis] = k
        return [x.with_shape(shape), TensorSpec(tuple(shape), np.dtype(np.int64))]

    @classmethod
    def count_flops(cls, operands, results, attrs) -> int:
        return operands[0].numel  # one comparison with the k-th best per element

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        axis = normalize_axis(attrs["axis"], x.ndim)
        rows = np.moveaxis(x, axis, -1)
        # A stable sort keeps ties in index order; NaN sorts last (greatest) in numpy too.
        order = np.argsort(rows, axis=-1, kind="stable")
        if attrs["largest"]:
            # best first: greatest value, lower index among equals (NaNs equal each other)
            order = np.argsort(-_ranks(rows, order), axis=-1, kind="stable")
        indices = order[..., :attrs["k"]]
        values = np.take_along_axis(rows, indices, -1)
        return [np.moveaxis(values, -1, axis), np.moveaxis(indices.astype(np.int64), -1, axis)]


def _ranks(rows: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each element's rank in ascending order, equal values (and all NaNs) sharing one."""
    ordered = np.take_along_axis(rows, order, -1)
    same = ordered[..., 1:] == ordered[..., :-1]
    if np.issubdtype(rows.dtype, np.floating):
        same |= np.isnan(ordered[..., 1:]) & np.isnan(ordered[..., :-1])
    dense = np.concatenate([np.zeros(ordered.shape[:-1] + (1,), np.int64), np.cumsum(~same, -1)], -1)
    ranks = np.empty_like(dense)
    np.put_along_axis(ranks, order, dense, -1)
    return ranks
