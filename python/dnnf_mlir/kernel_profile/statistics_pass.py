"""``dnnf-kernel-statistics``: each kernel function's ops, shapes, FLOPs and bytes, as
attributes that stay on it down to the LLVM dialect.

The FLOPs are the ECG ops' own count (``ECGOp.flops``, as ``dnnf-run --summary``), the
bytes those of the kernel's arguments and results: what it must at least read and
write, its traffic when its working set does not stay in the caches between kernels.
"""

from __future__ import annotations

import math

from .._mlir import ir
from ..ecg import ECGOp
from ..kernel_functions import is_kernel
from ..statistics import function_statistics
from ..transforms.pass_base import ModulePass, PassError
from ..transforms.registry import described_by_table

FLOPS_ATTR = "dnnf.kernel.flops"
BYTES_ATTR = "dnnf.kernel.bytes"
OPS_ATTR = "dnnf.kernel.ops"  # the ECG ops in order, "conv+add+relu"
SHAPES_ATTR = "dnnf.kernel.shapes"  # "1x3x8x8xf32, 8x3x3x3xf32 -> 1x288xf32"


def _bytes(shaped: ir.Type) -> int:
    shaped = ir.ShapedType(shaped)
    element = shaped.element_type
    width = element.width if hasattr(element, "width") else ir.FloatType(element).width
    return math.prod(shaped.shape) * max(1, width // 8)


def _shape_text(shaped: ir.Type) -> str:
    shaped = ir.ShapedType(shaped)
    return "x".join([*map(str, shaped.shape), str(shaped.element_type)])


def annotate_kernel(function) -> None:
    """Set the four attributes on the kernel ``function`` (a ``func.func`` of ECG ops)."""
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    body = function.regions[0].blocks[0]
    ops = [op.opview.mnemonic for op in body.operations
           if isinstance(op.opview, ECGOp) and op.opview.mnemonic != "constant"]
    sides = [", ".join(_shape_text(t) for t in types) for types in (function_type.inputs, function_type.results)]
    i64 = ir.IntegerType.get_signless(64)
    traffic = sum(_bytes(t) for t in [*function_type.inputs, *function_type.results])
    function.attributes[FLOPS_ATTR] = ir.IntegerAttr.get(i64, function_statistics(function).flops)
    function.attributes[BYTES_ATTR] = ir.IntegerAttr.get(i64, traffic)
    function.attributes[OPS_ATTR] = ir.StringAttr.get("+".join(ops))
    function.attributes[SHAPES_ATTR] = ir.StringAttr.get(" -> ".join(sides))


@described_by_table
class KernelStatisticsPass(ModulePass):
    """Annotate every kernel function (see the module docstring)."""

    NAME = "dnnf-kernel-statistics"

    def run(self, module: ir.Operation):
        kernels = [op.operation for op in module.regions[0].blocks[0].operations if is_kernel(op.operation)]
        if not kernels:
            raise PassError("the module has no kernel functions (run ecg-outline-kernels first)")
        with module.context:
            for function in kernels:
                annotate_kernel(function)


__all__ = ["BYTES_ATTR", "FLOPS_ATTR", "KernelStatisticsPass", "OPS_ATTR", "SHAPES_ATTR", "annotate_kernel"]
