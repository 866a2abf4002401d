"""What the ECG side (``fusion/``) and the code generator agree on about kernels.

``ecg-outline-kernels`` makes every kernel a private ``func.func`` marked
``KERNEL_ATTR``, called from the public functions; the code generator keeps each
such function apart (its elementwise fusion and epilogues stay inside one) and
reports ``kernel_counts``. ``stays_in_code`` is the one notion of a constant small
enough to be compiled into the code (cloned into each kernel that uses it); the
others are weights, passed as arguments and moved to the weights file. A kernel
may hold a loop over a recurrence's time steps, an ``scf.for`` marked ``TIME_STEPS``
(by convert-ecg-to-linalg), which the code generator's own tile loops are not.
"""

from __future__ import annotations

import math

from ._mlir import ir

KERNEL_ATTR = "dnnf.kernel"  # unit attribute on each kernel function
LAUNCHED_ATTR = "dnnf.kernels.launched"  # module: kernel calls per run of the public functions
UNIQUE_ATTR = "dnnf.kernels.unique"  # module: kernel functions
MIN_ELEMENTS = 64  # non-splat constants with fewer elements stay in the code
TIME_STEPS = "dnnf.time_steps"  # unit attribute on the scf.for of a recurrence over its time steps
# i64 on a kernel function: the FLOPs its code does as byte dot products (dnnf-int8-matmuls),
# which the profiler judges against the int8 peak rather than the FMA's.
INT8_FLOPS_ATTR = "dnnf.kernel.int8_flops"


def is_time_step_loop(op) -> bool:
    return op.name == "scf.for" and TIME_STEPS in op.attributes


def stays_in_code(value: ir.Attribute) -> bool:
    """Whether a constant tensor ``value`` belongs in the code rather than among the
    weights: a splat, an i1 tensor (numpy has no packed i1) or fewer than
    ``MIN_ELEMENTS`` elements, which the compiler can fold into the code."""
    shaped = ir.ShapedType(value.type)
    element = shaped.element_type
    if isinstance(element, ir.IntegerType) and element.width == 1:
        return True
    if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
        return True
    return math.prod(shaped.shape) < MIN_ELEMENTS


def is_kernel(op) -> bool:
    """Whether ``op`` is a kernel function (a ``func.func`` marked ``KERNEL_ATTR``)."""
    return op.name == "func.func" and KERNEL_ATTR in op.attributes


def is_public(op) -> bool:
    return "sym_visibility" not in op.attributes or ir.StringAttr(op.attributes["sym_visibility"]).value == "public"


def kernel_counts(module_op) -> tuple:
    """(launched, unique): the calls of kernel functions made by the public functions
    of ``module_op`` (a ``builtin.module`` operation), and how many kernel functions
    there are. (0, 0) when nothing was outlined."""
    functions = [op.operation for op in module_op.regions[0].blocks[0].operations if op.operation.name == "func.func"]
    kernels = {ir.StringAttr(f.attributes["sym_name"]).value for f in functions if is_kernel(f)}
    launched = 0
    for function in functions:
        if is_kernel(function) or not is_public(function) or not function.regions[0].blocks:
            continue
        for op in function.regions[0].blocks[0].operations:
            if op.operation.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in kernels:
                launched += 1
    return launched, len(kernels)


def record_kernel_counts(module_op) -> tuple:
    """Set ``LAUNCHED_ATTR`` and ``UNIQUE_ATTR`` of ``module_op`` to its ``kernel_counts``; returns them."""
    launched, unique = kernel_counts(module_op)
    i64 = ir.IntegerType.get_signless(64, module_op.context)
    module_op.attributes[LAUNCHED_ATTR] = ir.IntegerAttr.get(i64, launched)
    module_op.attributes[UNIQUE_ATTR] = ir.IntegerAttr.get(i64, unique)
    return launched, unique


__all__ = [
    "KERNEL_ATTR", "LAUNCHED_ATTR", "MIN_ELEMENTS", "UNIQUE_ATTR", "is_kernel", "is_public", "kernel_counts",
    "record_kernel_counts", "stays_in_code",
]
