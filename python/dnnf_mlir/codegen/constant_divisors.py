"""Divisions by a constant as multiplications by its reciprocal.

A vector division costs several multiplies (Zen 4: one ``vdivps zmm`` per 5 cycles
against two FMAs per cycle), and LLVM keeps ``x / c`` a division unless the program
allows the reciprocal. BERT's exact GELU divides every element of its 128x3072
activation by sqrt(2) before erf: one of the two divisions per vector that made
FFN1 + GELU cost as much fused as unfused. ``x * (1/c)`` differs from ``x / c`` by at
most one rounding of ``1/c`` (an ulp), far inside the tolerance of a float model.

``reciprocal_constant_divisors`` rewrites every float ``arith.divf`` whose divisor is
a constant (a scalar ``arith.constant`` or a ``linalg.generic`` argument bound to a
splat constant input) with a finite, normal reciprocal into ``arith.mulf`` by that
reciprocal. Divisors that are zero, infinite, NaN or so large that their reciprocal
is subnormal keep the division: the product would not give the quotient's inf, NaN or
precision there.
"""

from __future__ import annotations

import numpy as np

from .. import _mlir
from .._mlir import ir
from ..ir_walk import walk_ops
from .approximations import float_constant

_NUMPY_FLOATS = {ir.F32Type: np.float32, ir.F64Type: np.float64}


def _splat_input_value(argument):
    """The splat value of the constant input a ``linalg.generic`` body argument is
    bound to, or None."""
    generic = argument.owner.owner
    if generic.name != "linalg.generic" or argument.arg_number >= len(generic.inputs):
        return None
    source = generic.inputs[argument.arg_number].owner
    if not isinstance(source, ir.Operation) or source.name != "arith.constant":
        return None
    attribute = source.attributes["value"]
    if not isinstance(attribute, ir.DenseFPElementsAttr) or not attribute.is_splat:
        return None
    return ir.FloatAttr(attribute.get_splat_value()).value


def _constant_value(value):
    """The float constant ``value`` is, or None."""
    if isinstance(value, ir.BlockArgument):
        return _splat_input_value(value)
    return float_constant(value)


def _reciprocal(divisor: float, dtype):
    """``1/divisor`` in ``dtype`` where it is finite and normal, else None."""
    if not np.isfinite(divisor) or divisor == 0:
        return None
    with np.errstate(all="ignore"):
        reciprocal = dtype(1) / dtype(divisor)
    if not np.isfinite(reciprocal) or abs(reciprocal) < np.finfo(dtype).tiny:
        return None
    return float(reciprocal)


def reciprocal_constant_divisors(module: ir.Module) -> int:
    """Rewrite ``x / c`` (``c`` a constant) as ``x * (1/c)``; returns how many."""
    count = 0
    for op in walk_ops(module.operation, ("arith.divf",)):
        element = op.result.type
        dtype = next((t for kind, t in _NUMPY_FLOATS.items() if isinstance(element, kind)), None)
        divisor = _constant_value(op.operands[1]) if dtype is not None else None
        reciprocal = _reciprocal(divisor, dtype) if divisor is not None else None
        if reciprocal is None:
            continue
        with ir.InsertionPoint(op), op.location:
            product = _mlir.arith.mulf(op.operands[0], _mlir.arith.constant(element, reciprocal))
        op.result.replace_all_uses_with(product)
        op.erase()
        count += 1
    return count


__all__ = ["reciprocal_constant_divisors"]
