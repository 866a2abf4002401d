"""Which functions get their contiguous n-D vector transfers flattened into 1-D ones:
``mark_flat_transfer_functions(module)``.

A transfer of ``vector<16x9xf32>`` to a contiguous ``16x9`` buffer lowers, row by row,
into 16 stores of 9 floats: each a full vector and a one-lane remainder (or a masked
store). Flattened (``vector.flatten_vector_transfer_ops``), it is one store of 144
floats, nine full vectors; a depthwise row of ``2x25`` becomes one of 50. That is what
made DeepLab and MobileNetV2 2-3% faster.

The same pattern set drops unit dims from the values that loops carry: a matrix-vector
accumulator ``vector<16x1xf32>`` (16 output rows of one element: a squeeze-and-excitation
block's 1x1 convolution of a ``[C, 1, 1]`` vector) becomes ``vector<16xf32>`` at the
loop's boundary and is reshaped back into 16 one-element rows on every iteration, 16
extracts and 16 inserts per step of the reduction: those kernels of EfficientNet took
1.3-1.7x as long. So a function is flattened (``FLATTEN`` on its ``func.func``, which
the vector lowering script ``lowering/cpu/vector-lowering.mlir`` matches) unless one of
its loops carries a vector whose innermost dim is 1 and that holds more than one element.
"""

from __future__ import annotations

import math

from ..._mlir import ir
from ...ir_walk import walk_ops

FLATTEN = "dnnf.flatten_transfers"


def _carries_unit_rows(loop) -> bool:
    """Whether the ``scf.for`` ``loop`` carries a vector of several one-element rows."""
    return any(isinstance(result.type, ir.VectorType) and result.type.rank > 0 and result.type.shape[-1] == 1
               and math.prod(result.type.shape) > 1 for result in loop.results)


def mark_flat_transfer_functions(module) -> int:
    """Mark the functions of ``module`` whose transfers are to be flattened (see the module
    docstring); returns how many."""
    count = 0
    for function in walk_ops(module.operation, {"func.func"}):
        if not any(_carries_unit_rows(loop) for loop in walk_ops(function, {"scf.for"})):
            function.attributes[FLATTEN] = ir.UnitAttr.get()
            count += 1
    return count


__all__ = ["FLATTEN", "mark_flat_transfer_functions"]
