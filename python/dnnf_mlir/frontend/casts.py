"""Cast and CastLike to a float8 type, whose ``saturate`` attribute (default 1) ONNX
defines as clipping to the type's finite range before a conversion that does not
saturate: the clip is an ECG clip before the ECG cast, which rounds to nearest even
and turns what overflows into NaN (E4M3FN, the FNUZ types) or infinity (E5M2), as
ml_dtypes, ONNX's reference, does. NaN stays NaN either way.
"""

import numpy as np

from ..ecg.tensor_spec import FLOAT8_DTYPES, dtype_name, finfo
from .node_builder import NodeBuilder


def emit_cast(node: NodeBuilder, x, to: np.dtype) -> list:
    """Cast ``x`` to ``to``, saturating first where ``to`` is a float8 type and ``saturate`` is set."""
    source = node.spec(x).dtype
    if to in FLOAT8_DTYPES.values() and node.attr("saturate", 1) and source not in FLOAT8_DTYPES.values():
        limits = finfo(to)
        x = node.emit_one("clip", [x], min=float(limits.min), max=float(limits.max))
    return node.emit("cast", [x], {"to": dtype_name(to)})
