"""BitCast: the bits of each element read as another type of the same width."""

import numpy as np

from ..attributes import Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import require
from ..tensor_spec import DTYPE_BY_NAME, TensorSpec, dtype_name


class BitCastOp(ECGOp, name="bitcast"):
    """Reinterpret each element's bits as element type ``to`` (an MLIR element type name of the
    same width; a bool is the byte 0 or 1, so it becomes an 8-bit integer, never the reverse)."""

    input: Tensor
    output: TensorResult
    to: Str
    MAPPING = MappingType.ONE_TO_ONE
    ALGEBRA = Algebra(commutes_with=("Reorganize", "Shuffle"))
    FLOPS_PER_ELEMENT = 0  # no arithmetic: the bits are read as they are
    ONNX = ("BitCast",)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(attrs["to"] in DTYPE_BY_NAME, f"unsupported target element type '{attrs['to']}'")
        to = DTYPE_BY_NAME[attrs["to"]]
        require(to != np.bool_, "a bitcast to i1 (a byte that is neither 0 nor 1 is no bool)")
        require(x.dtype.itemsize == to.itemsize,
                f"{dtype_name(x.dtype)} and {attrs['to']} differ in width ({x.dtype.itemsize} and {to.itemsize} bytes)")
        return [TensorSpec(x.shape, to)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [inputs[0].view(results[0].dtype)]
