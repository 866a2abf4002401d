"""Many-to-Many matrix products: gemm (ONNX Gemm) and mat_mul (numpy matmul)."""

from typing import Optional

import numpy as np

from ..attributes import Float, Int
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import broadcast, require, same_dtype
from ..tensor_spec import TensorSpec, compute_dtype, element_kind
from .common import broadcasts_to


def _require_numeric(spec: TensorSpec, what: str):
    require(element_kind(spec.dtype) in "fiu", f"{what} must have a numeric element type, got {spec}")


class GemmOp(ECGOp, name="gemm"):
    """alpha * A' @ B' + beta * C with A' = A or A^T, B' = B or B^T; C broadcasts to (M, N)."""

    a: Tensor
    b: Tensor
    output: TensorResult
    alpha: Float
    beta: Float
    transA: Int
    transB: Int
    c: Optional[Tensor] = None
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = Algebra(distributes_over=("add", "sub"))
    ONNX = ("Gemm",)
    DEFAULTS = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}

    @classmethod
    def infer(cls, operands, attrs):
        require(len(operands) in (2, 3), f"expects A, B and an optional C, got {len(operands)} operands")
        a, b = operands[:2]
        _require_numeric(a, "A")
        dtype = same_dtype(operands)
        require(a.rank == 2, f"A must have rank 2, got {a}")
        require(b.rank == 2, f"B must have rank 2, got {b}")
        m, k = a.shape[::-1] if attrs["transA"] else a.shape
        k2, n = b.shape[::-1] if attrs["transB"] else b.shape
        require(k == k2, f"inner dimensions do not match: A' is {m}x{k}, B' is {k2}x{n}")
        if len(operands) == 3:
            c = operands[2]
            require(broadcasts_to(c.shape, (m, n)), f"C {c} must broadcast to the result shape ({m}, {n})")
        return [TensorSpec((m, n), dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        a = operands[0]
        k = a.shape[0] if attrs["transA"] else a.shape[1]
        return 2 * results[0].numel * k + (2 * results[0].numel if len(operands) == 3 else 0)

    @classmethod
    def reference(cls, inputs, attrs, results):
        a, b = inputs[:2]
        dtype = results[0].dtype
        ctype = compute_dtype(dtype)
        a = (a.T if attrs["transA"] else a).astype(ctype, copy=False)
        b = (b.T if attrs["transB"] else b).astype(ctype, copy=False)
        y = a @ b
        if attrs["alpha"] != 1.0:
            y = y * np.array(attrs["alpha"]).astype(ctype)
        if len(inputs) == 3 and attrs["beta"] != 0.0:
            c = inputs[2].astype(ctype, copy=False)
            y = y + (c if attrs["beta"] == 1.0 else c * np.array(attrs["beta"]).astype(ctype))
        return [np.asarray(y).astype(dtype, copy=False)]


class MatMulOp(ECGOp, name="mat_mul"):
    """numpy matmul: batch dimensions broadcast, 1-D operands are promoted and squeezed."""

    lhs: Tensor
    rhs: Tensor
    output: TensorResult
    MAPPING = MappingType.MANY_TO_MANY
    ALGEBRA = Algebra(distributes_over=("add", "sub"))
    ONNX = ("MatMul",)

    @classmethod
    def infer(cls, operands, attrs):
        a, b = operands
        _require_numeric(a, "lhs")
        dtype = same_dtype(operands)
        require(a.rank >= 1 and b.rank >= 1, f"operands must have rank >= 1, got {a} and {b}")
        a_shape = (1,) + a.shape if a.rank == 1 else a.shape
        b_shape = b.shape + (1,) if b.rank == 1 else b.shape
        require(
            a_shape[-1] == b_shape[-2],
            f"inner dimensions do not match: lhs {a} has {a_shape[-1]} columns, rhs {b} has {b_shape[-2]} rows",
        )
        batch = broadcast(a_shape[:-2], b_shape[:-2])
        shape = batch + (a_shape[-2],) * (a.rank > 1) + (b_shape[-1],) * (b.rank > 1)
        return [TensorSpec(shape, dtype)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return 2 * results[0].numel * operands[0].shape[-1]

    @classmethod
    def reference(cls, inputs, attrs, results):
        a, b = inputs
        dtype = results[0].dtype
        ctype = compute_dtype(dtype)
        return [np.asarray(np.matmul(a.astype(ctype, copy=False), b.astype(ctype, copy=False))).astype(dtype, copy=False)]
