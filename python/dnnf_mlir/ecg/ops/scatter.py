"""Scatters: ``scatter_elements`` and ``scatter_nd`` write (or combine) updates into a
copy of the data at positions read from an index tensor.

An output element takes its data unless updates land on it, and then combines them
with ``reduction`` ("none": the last update wins, "add", "mul", "max", "min") in the
updates' order: many updates may land on one element and where they land is only known
at run time, so these are Many-to-Many ops without algebraic properties. Negative
indices count from the end of their axis, as in ONNX.
"""

import numpy as np

from ..attributes import Int, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import normalize_axis, require
from ..tensor_spec import TensorSpec

REDUCTIONS = ("none", "add", "mul", "max", "min")
_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _check_common(data: TensorSpec, indices: TensorSpec, updates: TensorSpec, attrs):
    require(attrs["reduction"] in REDUCTIONS, f"reduction '{attrs['reduction']}' is not one of {list(REDUCTIONS)}")
    require(indices.dtype in (np.dtype(np.int32), np.dtype(np.int64)), f"indices must be i32 or i64, got {indices}")
    require(updates.dtype == data.dtype, f"updates {updates} must have the element type of data {data}")
    require(data.rank >= 1, f"data must have rank >= 1, got {data}")


def _wrapped(indices: np.ndarray, extent, op: str) -> np.ndarray:
    """Indices in [-extent, extent) made non-negative; IndexError otherwise (a run-time error in ONNX)."""
    indices = indices.astype(np.int64)
    extent = np.asarray(extent, np.int64)
    bad = (indices < -extent) | (indices >= extent)
    if bad.any():
        raise IndexError(f"{op} index {int(indices[bad][0])} is out of range")
    return np.where(indices < 0, indices + extent, indices)


def _apply(data: np.ndarray, positions: tuple, updates: np.ndarray, reduction: str) -> np.ndarray:
    """``data`` with ``updates`` written or combined at ``positions``, one update after the other."""
    out = np.array(data, copy=True)
    if reduction == "none":
        out[positions] = updates
    else:
        _COMBINE[reduction].at(out, positions, updates)
    return out


class _ScatterBase(ECGOp):
    """What both scatters share: their operands, result, reduction and FLOPs."""

    data: Tensor
    indices: Tensor
    updates: Tensor
    output: TensorResult
    reduction: Str
    MAPPING = MappingType.MANY_TO_MANY

    @classmethod
    def count_flops(cls, operands, results, attrs) -> int:
        return 0 if attrs["reduction"] == "none" else operands[2].numel


class ScatterElementsOp(_ScatterBase, name="scatter_elements"):
    """out = data, then out[..., indices[i, j, ...], ...] (at ``axis``) combined with updates[i, j, ...]."""

    axis: Int
    ONNX = ("ScatterElements", "Scatter")
    DEFAULTS = {"axis": 0, "reduction": "none"}

    @classmethod
    def infer(cls, operands, attrs):
        data, indices, updates = operands
        _check_common(data, indices, updates, attrs)
        axis = normalize_axis(attrs["axis"], data.rank)
        require(indices.shape == updates.shape, f"indices {indices} and updates {updates} must have one shape")
        require(indices.rank == data.rank and all(n <= d for i, (n, d) in enumerate(zip(indices.shape, data.shape))
                                                  if i != axis),
                f"indices {indices} must have the rank of data {data} and lie within it off axis {axis}")
        return [data]

    @classmethod
    def reference(cls, inputs, attrs, results):
        data, indices, updates = inputs
        axis = normalize_axis(attrs["axis"], data.ndim)
        positions = list(np.indices(indices.shape))
        positions[axis] = _wrapped(indices, data.shape[axis], "scatter_elements")
        return [_apply(data, tuple(positions), updates, attrs["reduction"])]


class ScatterNDOp(_ScatterBase, name="scatter_nd"):
    """out = data, then out[indices[i, ...]] (a tuple over the leading axes) combined with updates[i, ...]."""

    ONNX = ("ScatterND",)
    DEFAULTS = {"reduction": "none"}

    @classmethod
    def infer(cls, operands, attrs):
        data, indices, updates = operands
        _check_common(data, indices, updates, attrs)
        depth = indices.shape[-1] if indices.rank else 0
        require(indices.rank >= 1 and 1 <= depth <= data.rank, f"indices {indices} must end in tuples of at most "
                f"{data.rank} indices into data {data}")
        require(updates.shape == indices.shape[:-1] + data.shape[depth:],
                f"updates {updates} must have the shape {list(indices.shape[:-1] + data.shape[depth:])}")
        return [data]

    @classmethod
    def reference(cls, inputs, attrs, results):
        data, indices, updates = inputs
        depth = indices.shape[-1]
        tuples = _wrapped(indices.reshape(-1, depth), data.shape[:depth], "scatter_nd")
        rows = updates.reshape((len(tuples),) + data.shape[depth:])
        flat = data.reshape((-1,) + data.shape[depth:])
        linear = np.ravel_multi_index(tuple(tuples.T), data.shape[:depth]) if len(tuples) else np.zeros(0, np.int64)
        return [_apply(flat, (linear,), rows, attrs["reduction"]).reshape(data.shape)]
