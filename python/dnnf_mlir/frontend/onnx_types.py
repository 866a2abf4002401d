"""ONNX element types and the importer's error type, shared by importer and converters."""

import numpy as np
import onnx
from onnx import helper

from ..ecg.tensor_spec import UnsupportedTypeError, dtype_name


class OnnxImportError(Exception):
    """A model the importer cannot translate; the message is one line for the user."""


def onnx_dtype(elem_type: int) -> np.dtype:
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
        dtype_name(dtype)  # raises for types ECG does not model (float8 E8M0, float4, int4, strings)
        return dtype
    except (KeyError, UnsupportedTypeError):
        names = dict(onnx.TensorProto.DataType.items())
        name = next((n for n, v in names.items() if v == elem_type), f"#{elem_type} (not an ONNX type)")
        raise OnnxImportError(f"ONNX element type {name} is not supported") from None
