"""A kernel's scalar results copied into one element each: a root of rank 0 (a
reduction over every axis, ONNX's ReduceSum without axes; an element-wise op of
scalars) has no dim to tile over workgroups and threads, and its schedule failed (the
kernel was refused, fused and op by op). The copy, into a [1] tensor collapsed back
at the return, is the root instead: one thread of one workgroup computes the scalar,
its producers fused in. A long reduction in one thread is slow; a split over the
workgroup's threads (``schedule._split``) would be the next step."""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_kernel
from ...linalg_builders import generic
from ..lowered_module import functions


def _computed_scalar(value) -> bool:
    """A rank-0 tensor that a linalg op of the kernel computes."""
    return (isinstance(value.type, ir.RankedTensorType) and ir.RankedTensorType(value.type).rank == 0
            and isinstance(value, ir.OpResult) and value.owner.name.startswith("linalg."))


def scalar_results_through_copies(module: ir.Module) -> int:
    """Every scalar result that a kernel function computes -> its copy into one element,
    collapsed back. Returns how many."""
    count = 0
    for function in [f for f in functions(module) if is_kernel(f.operation)]:
        for ret in walk_ops(function.operation, {"func.return"}):
            for index, value in enumerate(ret.operands):
                if not _computed_scalar(value):
                    continue
                with ir.InsertionPoint(ret), ret.location:
                    element = ir.RankedTensorType(value.type).element_type
                    one = _mlir.tensor.empty([1], element)
                    maps = [ir.AffineMap.get(1, 0, []), ir.AffineMap.get_identity(1)]
                    (copy,) = generic([value], maps, [one], lambda x, _out: x)
                    ret.operands[index] = _mlir.tensor.collapse_shape(value.type, copy, ir.ArrayAttr.get([]))
                count += 1
    return count


__all__ = ["scalar_results_through_copies"]
