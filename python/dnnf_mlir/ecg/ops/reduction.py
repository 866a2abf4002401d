"""Many-to-Many reductions: the ONNX Reduce* ops over a set of axes (one ``ReduceOp``
subclass each, made by ``_reduce``) and arg_max/arg_min along one axis.
"""

import numpy as np

from ..attributes import Int, Ints
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import normalize_axes, normalize_axis, require
from ..tensor_spec import TensorSpec, compute_dtype, dtype_name, element_kind
from .common import LINEAR, MONOTONE


class ReduceOp(ECGOp):
    """Reduce ``axes`` (empty: all axes, or none with noop_with_empty_axes), keeping them if keepdims."""

    input: Tensor
    output: TensorResult
    keepdims: Int
    noop_with_empty_axes: Int
    axes: Ints
    MAPPING = MappingType.MANY_TO_MANY
    FLOPS_PER_INPUT = 1
    KINDS = "f"
    # Whether an empty reduced axis is allowed (it is not for max/min: no identity element).
    EMPTY_OK = True
    DEFAULTS = {"axes": [], "keepdims": 1, "noop_with_empty_axes": 0}

    @classmethod
    def reduced_axes(cls, rank, attrs):
        """The normalized reduced axes; none with empty axes and noop_with_empty_axes.

        Reducing no axes still applies the op's elementwise parts (ONNX Runtime:
        ReduceSumSquare gives x*x, ReduceL1 |x|, ReduceLogSum log(x)).
        """
        axes = list(attrs["axes"])
        if not axes:
            return [] if attrs["noop_with_empty_axes"] else list(range(rank))
        return sorted(normalize_axes(axes, rank))

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(element_kind(x.dtype) in cls.KINDS, f"input must not have element type {dtype_name(x.dtype)}")
        require(attrs["keepdims"] in (0, 1), f"keepdims must be 0 or 1, got {attrs['keepdims']}")
        require(
            attrs["noop_with_empty_axes"] in (0, 1),
            f"noop_with_empty_axes must be 0 or 1, got {attrs['noop_with_empty_axes']}",
        )
        axes = cls.reduced_axes(x.rank, attrs)
        for a in axes:
            require(x.shape[a] > 0 or cls.EMPTY_OK, f"cannot reduce the empty axis {a} of {x}")
        if attrs["keepdims"]:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return [x.with_shape(shape)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return cls.FLOPS_PER_INPUT * operands[0].numel

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        dtype = results[0].dtype
        axes = cls.reduced_axes(x.ndim, attrs)
        x = x.astype(compute_dtype(dtype), copy=False)
        with np.errstate(all="ignore"):
            y = cls.compute(x, tuple(axes), bool(attrs["keepdims"]))
        return [np.asarray(y).astype(dtype, copy=False).reshape(results[0].shape)]


def _reduce(name, onnx, compute, doc, *, kinds="f", flops=1, algebra=None, empty_ok=True):
    namespace = {
        "__doc__": doc,
        "ONNX": (onnx,),
        "compute": staticmethod(compute),
        "KINDS": kinds,
        "FLOPS_PER_INPUT": flops,
        "EMPTY_OK": empty_ok,
    }
    if algebra is not None:
        namespace["ALGEBRA"] = algebra
    class_name = "".join(part.title() for part in name.split("_")) + "Op"
    return type(class_name, (ReduceOp,), namespace, name=name)


def _sum(x, axes, keepdims):
    return np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


ReduceSumOp = _reduce(
    "reduce_sum", "ReduceSum", _sum, "Sum over the axes.", kinds="fiu", algebra=Algebra(commutes_with=LINEAR)
)
ReduceMeanOp = _reduce(
    "reduce_mean", "ReduceMean", lambda x, axes, keepdims: np.mean(x, axis=axes, keepdims=keepdims),
    "Mean over the axes.", algebra=Algebra(commutes_with=LINEAR),
)
ReduceMaxOp = _reduce(
    "reduce_max", "ReduceMax", lambda x, axes, keepdims: np.max(x, axis=axes, keepdims=keepdims),
    "Maximum over the axes.", kinds="fiub", algebra=Algebra(commutes_with=MONOTONE), empty_ok=False,
)
ReduceMinOp = _reduce(
    "reduce_min", "ReduceMin", lambda x, axes, keepdims: np.min(x, axis=axes, keepdims=keepdims),
    "Minimum over the axes.", kinds="fiub", algebra=Algebra(commutes_with=MONOTONE), empty_ok=False,
)
ReduceProdOp = _reduce(
    "reduce_prod", "ReduceProd", lambda x, axes, keepdims: np.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Product over the axes.", kinds="fiu",
    algebra=Algebra(commutes_with=("abs", "sqrt", "reciprocal", "square", "sign")),
)
ReduceL1Op = _reduce(
    "reduce_l1", "ReduceL1", lambda x, axes, keepdims: np.sum(np.abs(x), axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Sum of absolute values over the axes.", kinds="fiu", flops=2,
)
ReduceL2Op = _reduce(
    "reduce_l2", "ReduceL2", lambda x, axes, keepdims: np.sqrt(np.sum(np.square(x), axis=axes, keepdims=keepdims)),
    "Euclidean norm over the axes.", flops=2,
)
ReduceSumSquareOp = _reduce(
    "reduce_sum_square", "ReduceSumSquare",
    lambda x, axes, keepdims: np.sum(np.square(x), axis=axes, keepdims=keepdims, dtype=x.dtype),
    "Sum of squares over the axes.", kinds="fiu", flops=2,
)
ReduceLogSumOp = _reduce(
    "reduce_log_sum", "ReduceLogSum", lambda x, axes, keepdims: np.log(np.sum(x, axis=axes, keepdims=keepdims)),
    "Logarithm of the sum over the axes.",
)


def _log_sum_exp(x, axes, keepdims):
    peak = np.max(x, axis=axes, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    y = np.log(np.sum(np.exp(x - peak), axis=axes, keepdims=True)) + peak
    return y if keepdims else np.squeeze(y, axis=axes)


ReduceLogSumExpOp = _reduce(
    "reduce_log_sum_exp", "ReduceLogSumExp", _log_sum_exp, "log(sum(exp(x))) over the axes (computed stably).",
    flops=3, empty_ok=False,
)


class _ArgReduce(ECGOp):
    input: Tensor
    output: TensorResult
    axis: Int
    keepdims: Int
    select_last_index: Int
    MAPPING = MappingType.MANY_TO_MANY
    DEFAULTS = {"axis": 0, "keepdims": 1, "select_last_index": 0}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(element_kind(x.dtype) in "fiu", f"input must have a numeric element type, got {x}")
        require(x.rank >= 1, f"input must have rank >= 1, got {x}")
        axis = normalize_axis(attrs["axis"], x.rank)
        require(x.shape[axis] > 0, f"cannot take the {cls.ONNX[0]} of the empty axis {axis} of {x}")
        require(attrs["keepdims"] in (0, 1), f"keepdims must be 0 or 1, got {attrs['keepdims']}")
        require(
            attrs["select_last_index"] in (0, 1), f"select_last_index must be 0 or 1, got {attrs['select_last_index']}"
        )
        shape = list(x.shape)
        if attrs["keepdims"]:
            shape[axis] = 1
        else:
            del shape[axis]
        return [TensorSpec(shape, np.int64)]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        return operands[0].numel

    @classmethod
    def reference(cls, inputs, attrs, results):
        (x,) = inputs
        axis = normalize_axis(attrs["axis"], x.ndim)
        if attrs["select_last_index"]:
            last = x.shape[axis] - 1
            index = last - cls.compute(np.flip(x, axis=axis), axis=axis)
        else:
            index = cls.compute(x, axis=axis)
        if attrs["keepdims"]:
            index = np.expand_dims(index, axis)
        return [np.asarray(index, dtype=np.int64)]


class ArgMaxOp(_ArgReduce, name="arg_max"):
    """Index (int64) of the maximum along ``axis``; the first one unless select_last_index."""

    ONNX = ("ArgMax",)
    compute = staticmethod(np.argmax)


class ArgMinOp(_ArgReduce, name="arg_min"):
    """Index (int64) of the minimum along ``axis``; the first one unless select_last_index."""

    ONNX = ("ArgMin",)
    compute = staticmethod(np.argmin)
