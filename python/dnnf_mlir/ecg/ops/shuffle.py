"""Shuffle ops, which permute the elements: transpose, depth_to_space and
space_to_depth (no arithmetic, 0 FLOPs).
"""

import numpy as np

from ..attributes import Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import require
from .common import COMMUTES_WITH_UNARY, int_list


class TransposeOp(ECGOp, name="transpose"):
    """Permute the dimensions: result dimension i is input dimension perm[i]."""

    input: Tensor
    output: TensorResult
    perm: Ints
    MAPPING = MappingType.SHUFFLE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Transpose",)

    @classmethod
    def default_attrs(cls, operands):
        return {"perm": list(reversed(range(operands[0].rank)))}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        perm = int_list(attrs["perm"])
        require(sorted(perm) == list(range(x.rank)), f"perm {perm} is not a permutation of 0..{x.rank - 1} for {x}")
        return [x.with_shape(x.shape[p] for p in perm)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [np.transpose(inputs[0], int_list(attrs["perm"]))]


class DepthToSpaceOp(ECGOp, name="depth_to_space"):
    """NCHW -> N, C/b², H*b, W*b: channel blocks become spatial blocks (mode DCR or CRD)."""

    input: Tensor
    output: TensorResult
    blocksize: Int
    mode: Str
    MAPPING = MappingType.SHUFFLE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("DepthToSpace",)
    DEFAULTS = {"mode": "DCR"}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        b, mode = attrs["blocksize"], attrs["mode"]
        require(mode in ("DCR", "CRD"), f"mode '{mode}' must be DCR or CRD")
        require(b >= 1, f"blocksize {b} must be positive")
        require(x.rank == 4, f"input must have rank 4 (NCHW), got {x}")
        n, c, h, w = x.shape
        require(c % (b * b) == 0, f"channels {c} of {x} are not divisible by blocksize² {b * b}")
        return [x.with_shape((n, c // (b * b), h * b, w * b))]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, b = inputs[0], attrs["blocksize"]
        n, c, h, w = x.shape
        if attrs["mode"] == "DCR":
            y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        return [y.reshape(results[0].shape)]


class SpaceToDepthOp(ECGOp, name="space_to_depth"):
    """NCHW -> N, C*b², H/b, W/b: spatial blocks become channels (inverse of DCR)."""

    input: Tensor
    output: TensorResult
    blocksize: Int
    MAPPING = MappingType.SHUFFLE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("SpaceToDepth",)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        b = attrs["blocksize"]
        require(b >= 1, f"blocksize {b} must be positive")
        require(x.rank == 4, f"input must have rank 4 (NCHW), got {x}")
        n, c, h, w = x.shape
        require(h % b == 0 and w % b == 0, f"spatial dimensions {h}x{w} of {x} are not divisible by blocksize {b}")
        return [x.with_shape((n, c * b * b, h // b, w // b))]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, b = inputs[0], attrs["blocksize"]
        n, c, h, w = x.shape
        y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
        return [y.reshape(results[0].shape)]
