"""Tensor types as plain Python values, and their MLIR spelling.

Shape functions, FLOPs estimates and the importer reason about ``TensorSpec``s, which
need no MLIR context; ``to_mlir``/``from_mlir`` convert at the IR boundary.
"""

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .._mlir import ir

# bfloat16 as numpy holds it (ml_dtypes, which onnx's numpy_helper uses too): its
# dtype.kind is "V", so ``element_kind`` is how code asks whether a dtype is a float.
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# The float8 storage types (ml_dtypes, as onnx's numpy_helper returns them), by MLIR name;
# their kind is "V" too.
FLOAT8_DTYPES = {
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
}

# numpy dtype -> (MLIR spelling, builder); signed ints are signless as in MLIR's
# builtin arithmetic, unsigned ones use MLIR's unsigned integer types.
_DTYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    BFLOAT16: "bf16",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.bool_): "i1",
    **{dtype: name for name, dtype in FLOAT8_DTYPES.items()},
}
_FLOAT8_TYPES = {
    "f8E4M3FN": ir.Float8E4M3FNType, "f8E4M3FNUZ": ir.Float8E4M3FNUZType,
    "f8E5M2": ir.Float8E5M2Type, "f8E5M2FNUZ": ir.Float8E5M2FNUZType,
}
# MLIR element type name -> numpy dtype.
DTYPE_BY_NAME = {name: dtype for dtype, name in _DTYPES.items()}

SUPPORTED_DTYPES = tuple(_DTYPES)


# The most elements one tensor may have: 2^31 (8 GiB of f32), far above any model's
# largest tensor (GPT-2's embedding table: 39M) and far below what would make the
# importer, the interpreter or the compiled code try to allocate terabytes for a
# hostile declared shape.
MAX_ELEMENTS = 1 << 31


class UnsupportedTypeError(ValueError):
    """A type the ECG dialect does not model."""


@dataclass(frozen=True)
class TensorSpec:
    """A statically shaped tensor type: ``shape`` and numpy ``dtype``."""

    shape: tuple
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        check_shape(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    @property
    def is_float(self) -> bool:
        return element_kind(self.dtype) == "f"

    def with_shape(self, shape) -> "TensorSpec":
        return TensorSpec(tuple(shape), self.dtype)

    def __str__(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + dtype_name(self.dtype) + ">"

    @staticmethod
    def of(array: np.ndarray) -> "TensorSpec":
        return TensorSpec(array.shape, array.dtype)


def check_shape(shape):
    """Raise UnsupportedTypeError for a negative dimension or more than MAX_ELEMENTS
    elements (counted without overflow: Python integers)."""
    shape, numel = [int(d) for d in shape], 1
    for dim in shape:
        if dim < 0:
            raise UnsupportedTypeError(f"shape {shape} has a negative dimension")
        numel *= dim
    if numel > MAX_ELEMENTS:
        raise UnsupportedTypeError(f"shape {shape} has {numel} elements, more than the {MAX_ELEMENTS} supported")


def element_kind(dtype) -> str:
    """numpy's ``dtype.kind`` ("f", "i", "u", "b"), with bfloat16 a float ("f")."""
    dtype = np.dtype(dtype)
    return "f" if dtype == BFLOAT16 or dtype in FLOAT8_DTYPES.values() else dtype.kind


def compute_dtype(dtype) -> np.dtype:
    """What the reference computes a half-precision or float8 type in: float32 (numpy has no
    BLAS for them, and half-precision sums lose the products' bits); else ``dtype``."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype in (np.float16, BFLOAT16, *FLOAT8_DTYPES.values()) else dtype


def finfo(dtype):
    """numpy's finfo, for bfloat16 too."""
    return ml_dtypes.finfo(dtype)


def dtype_name(dtype) -> str:
    try:
        return _DTYPES[np.dtype(dtype)]
    except KeyError:
        raise UnsupportedTypeError(f"element type {np.dtype(dtype)} is not supported") from None


def element_type(dtype) -> ir.Type:
    name = dtype_name(dtype)
    if name in FLOAT8_DTYPES:
        return _FLOAT8_TYPES[name].get()
    if name.startswith("f"):
        return {"f16": ir.F16Type, "f32": ir.F32Type, "f64": ir.F64Type}[name].get()
    if name == "bf16":
        return ir.BF16Type.get()
    if name.startswith("ui"):
        return ir.IntegerType.get_unsigned(int(name[2:]))
    return ir.IntegerType.get_signless(int(name[1:]))


def to_mlir(spec: TensorSpec) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(spec.shape), element_type(spec.dtype))


def from_mlir(type_: ir.Type) -> TensorSpec:
    """The spec of a static tensor type; raises UnsupportedTypeError for anything else."""
    if not isinstance(type_, ir.RankedTensorType):
        raise UnsupportedTypeError(f"expected a ranked tensor type, got {type_}")
    tensor = type_
    if not tensor.has_static_shape:
        raise UnsupportedTypeError(f"expected a static shape, got {type_}")
    name = str(tensor.element_type)
    if name not in DTYPE_BY_NAME:
        raise UnsupportedTypeError(f"element type {name} is not supported")
    return TensorSpec(tuple(tensor.shape), DTYPE_BY_NAME[name])
