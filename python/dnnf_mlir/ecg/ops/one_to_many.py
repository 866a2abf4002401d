"""One-to-Many ops that repeat or pick input elements without arithmetic (0 FLOPs):
expand, tile, gather and gather_elements. Resize, which interpolates, is in resize.py.

Expand's ``shape`` is the final static shape: the importer resolves ONNX's
bidirectional broadcast with ``ExpandOp.resolve_shape``. Axis attributes keep
ONNX's convention: negative values count from the end, and so do negative indices.
"""

import numpy as np

from ..._mlir import ir
from ..attributes import Elements, Int, Ints
from ..base import ECGOp, Tensor, TensorResult, VerificationError
from ..properties import MappingType
from ..shapes import broadcast, normalize_axis, require
from ..tensor_spec import TensorSpec
from .common import COMMUTES_WITH_UNARY, int_list


class ExpandOp(ECGOp, name="expand"):
    """Broadcast the input to ``shape``, the final static shape (see ``resolve_shape``)."""

    input: Tensor
    output: TensorResult
    shape: Ints
    MAPPING = MappingType.ONE_TO_MANY
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Expand",)

    @classmethod
    def resolve_shape(cls, input_shape, onnx_shape) -> list:
        """ONNX Expand's result shape: the bidirectional broadcast of both shapes."""
        return list(broadcast(int_list(input_shape), int_list(onnx_shape)))

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        shape = tuple(int_list(attrs["shape"]))
        require(all(d >= 0 for d in shape), f"shape {list(shape)} must be non-negative")
        ok = len(shape) >= x.rank and all(
            d == 1 or d == s for d, s in zip(reversed(x.shape), reversed(shape))
        )
        require(ok, f"input {x} does not broadcast to shape {list(shape)} (resolve ONNX shapes with ExpandOp.resolve_shape)")
        return [x.with_shape(shape)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [np.array(np.broadcast_to(inputs[0], results[0].shape))]


class TileOp(ECGOp, name="tile"):
    """Repeat the input ``repeats[i]`` times along each axis i."""

    input: Tensor
    output: TensorResult
    repeats: Ints
    MAPPING = MappingType.ONE_TO_MANY
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Tile",)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        repeats = int_list(attrs["repeats"])
        require(len(repeats) == x.rank, f"repeats {repeats} must have one entry per dimension of {x}")
        require(all(r >= 0 for r in repeats), f"repeats {repeats} must be non-negative")
        return [x.with_shape(d * r for d, r in zip(x.shape, repeats))]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [np.tile(inputs[0], int_list(attrs["repeats"])).reshape(results[0].shape)]


class _IndexedBase(ECGOp):
    """Ops that pick elements of ``data`` at ``indices`` along ``axis``."""

    data: Tensor
    indices: Tensor
    output: TensorResult
    axis: Int
    MAPPING = MappingType.ONE_TO_MANY
    ALGEBRA = COMMUTES_WITH_UNARY
    DEFAULTS = {"axis": 0}

    @staticmethod
    def checked_axis(data: TensorSpec, indices: TensorSpec, attrs) -> int:
        """The normalized axis, after checking what every indexed op requires."""
        require(indices.dtype in (np.dtype(np.int32), np.dtype(np.int64)), f"indices must be i32 or i64, got {indices}")
        require(data.rank >= 1, f"data must have rank >= 1, got {data}")
        return normalize_axis(attrs["axis"], data.rank)

    def check(self):
        """Constant indices must be in range: ONNX makes any other a run-time error,
        which a compiler can report now (indices computed at run time are checked by
        the compiled code, see ``compiler.index_checks``)."""
        super().check()
        source = self.operation.operands[1].owner
        if isinstance(source, ir.Block) or source.operation.name != "ecg.constant":
            return
        data = self.operand_specs[0]
        dim = data.shape[normalize_axis(self.attrs["axis"], data.rank)]
        try:
            indices = Elements.from_attr(source.operation.attributes["value"])
        except ValueError:  # no data (a missing resource): the constant's own verifier says so
            return
        try:
            _normalized_indices(indices, dim, self.mnemonic)
        except IndexError as error:
            raise VerificationError(str(error)) from None


def _normalized_indices(indices: np.ndarray, dim: int, op: str) -> np.ndarray:
    """Indices in [-dim, dim) made non-negative; raises IndexError otherwise (a runtime error in ONNX)."""
    indices = indices.astype(np.int64)
    bad = (indices < -dim) | (indices >= dim)
    if bad.any():
        raise IndexError(f"{op} index {int(indices[bad][0])} is out of range [{-dim}, {dim})")
    return np.where(indices < 0, indices + dim, indices)


class GatherOp(_IndexedBase, name="gather"):
    """Take the slices ``indices`` (negative ones count from the end) along ``axis``."""

    ONNX = ("Gather",)

    @classmethod
    def infer(cls, operands, attrs):
        data, indices = operands
        axis = cls.checked_axis(data, indices, attrs)
        return [data.with_shape(data.shape[:axis] + indices.shape + data.shape[axis + 1:])]

    @classmethod
    def reference(cls, inputs, attrs, results):
        data, indices = inputs
        axis = normalize_axis(attrs["axis"], data.ndim)
        return [np.take(data, _normalized_indices(indices, data.shape[axis], "gather"), axis=axis)]


class GatherElementsOp(_IndexedBase, name="gather_elements"):
    """out[i][j][k] = data[i][indices[i][j][k]][k] for axis 1 (and likewise for others)."""

    ONNX = ("GatherElements",)

    @classmethod
    def infer(cls, operands, attrs):
        data, indices = operands
        axis = cls.checked_axis(data, indices, attrs)
        require(indices.rank == data.rank, f"indices {indices} must have the rank of data {data}")
        for i, (d, n) in enumerate(zip(data.shape, indices.shape)):
            require(i == axis or n <= d, f"indices {indices} exceed data {data} in dimension {i}")
        return [data.with_shape(indices.shape)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        data, indices = inputs
        axis = normalize_axis(attrs["axis"], data.ndim)
        index = list(np.indices(indices.shape, sparse=True))
        index[axis] = _normalized_indices(indices, data.shape[axis], "gather_elements")
        return [data[tuple(index)]]
