"""Reorganize ops that keep the elements in row-major order and change only the
shape: reshape, flatten, squeeze and unsqueeze (no arithmetic, 0 FLOPs).

Reshape's ``shape`` is an attribute holding the final static shape: the importer
resolves ONNX's 0 (copy) and -1 (infer) entries with ``ReshapeOp.resolve_shape``.
Axis attributes keep ONNX's convention: negative values count from the end.
"""

from ..attributes import Int, Ints
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..shapes import normalize_axes, require
from .common import COMMUTES_WITH_UNARY, int_list, shape_numel


class ReshapeOp(ECGOp, name="reshape"):
    """The input's elements in row-major order, laid out in ``shape``.

    ``shape`` is the final static shape: no ONNX 0 (copy) or -1 (infer) entries;
    the importer resolves them with ``resolve_shape``. A 0 here is a literal
    zero-sized dimension.
    """

    input: Tensor
    output: TensorResult
    shape: Ints
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Reshape",)

    @classmethod
    def resolve_shape(cls, input_shape, onnx_shape, allowzero: int = 0) -> list:
        """The static shape ONNX Reshape produces for ``onnx_shape`` (0 copies, -1 infers)."""
        input_shape, shape = int_list(input_shape), int_list(onnx_shape)
        numel = shape_numel(input_shape)
        require(all(d >= -1 for d in shape), f"reshape shape {shape} has an entry below -1")
        require(shape.count(-1) <= 1, f"reshape shape {shape} has more than one -1")
        if allowzero:
            require(not (0 in shape and -1 in shape), f"reshape shape {shape} has both 0 and -1 with allowzero=1")
        else:
            for i, d in enumerate(shape):
                if d == 0:
                    require(i < len(input_shape), f"reshape shape {shape} copies dimension {i} (0) of a rank-{len(input_shape)} input")
                    shape[i] = input_shape[i]
        if -1 in shape:
            known = shape_numel(d for d in shape if d != -1)
            require(known != 0 and numel % known == 0,
                    f"reshape shape {list(onnx_shape)} cannot hold the {numel} elements of an input of shape {tuple(input_shape)}")
            shape[shape.index(-1)] = numel // known
        require(shape_numel(shape) == numel,
                f"reshape shape {list(onnx_shape)} has {shape_numel(shape)} elements but the input of shape {tuple(input_shape)} has {numel}")
        return shape

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        shape = int_list(attrs["shape"])
        require(all(d >= 0 for d in shape),
                f"shape {shape} must be static and non-negative (resolve ONNX -1 with ReshapeOp.resolve_shape)")
        require(shape_numel(shape) == x.numel, f"shape {shape} has {shape_numel(shape)} elements but the input {x} has {x.numel}")
        return [x.with_shape(shape)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [inputs[0].reshape(results[0].shape)]


class FlattenOp(ECGOp, name="flatten"):
    """A 2-D view: dimensions before ``axis`` form the rows, the others the columns."""

    input: Tensor
    output: TensorResult
    axis: Int
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Flatten",)
    DEFAULTS = {"axis": 1}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        axis = attrs["axis"]
        require(-x.rank <= axis <= x.rank, f"axis {axis} is out of range [{-x.rank}, {x.rank}] for {x}")
        axis = axis + x.rank if axis < 0 else axis
        return [x.with_shape((shape_numel(x.shape[:axis]), shape_numel(x.shape[axis:])))]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [inputs[0].reshape(results[0].shape)]


class SqueezeOp(ECGOp, name="squeeze"):
    """Drop the size-1 dimensions ``axes`` (by default every size-1 dimension)."""

    input: Tensor
    output: TensorResult
    axes: Ints
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Squeeze",)

    @classmethod
    def default_attrs(cls, operands):
        return {"axes": [i for i, d in enumerate(operands[0].shape) if d == 1]}

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        axes = normalize_axes(int_list(attrs["axes"]), x.rank)
        for a in axes:
            require(x.shape[a] == 1, f"cannot squeeze axis {a} of size {x.shape[a]} in {x}")
        return [x.with_shape(d for i, d in enumerate(x.shape) if i not in axes)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [inputs[0].reshape(results[0].shape)]


class UnsqueezeOp(ECGOp, name="unsqueeze"):
    """Insert size-1 dimensions at ``axes`` (positions in the result)."""

    input: Tensor
    output: TensorResult
    axes: Ints
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Unsqueeze",)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        rank = x.rank + len(attrs["axes"])
        axes = set(normalize_axes(int_list(attrs["axes"]), rank))
        dims = iter(x.shape)
        return [x.with_shape(1 if i in axes else next(dims) for i in range(rank))]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [inputs[0].reshape(results[0].shape)]
