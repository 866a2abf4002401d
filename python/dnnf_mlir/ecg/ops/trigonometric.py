"""One-to-One trigonometric and hyperbolic functions beyond sin and cos (tan, their
inverses, sinh, cosh and the inverse hyperbolic functions), on floating-point tensors.

Each is a unary element-wise op: it commutes with every data-movement op, and the
increasing ones defined on all reals (atan, sinh, asinh) with max and min
(f(max(a, b)) == max(f(a), f(b))). Those defined on an interval (asin, acos, acosh, atanh)
do not: outside it f is NaN, and max(f(a), f(b)) then differs from f(max(a, b)).
"""

import numpy as np

from ..properties import Algebra
from .elementwise import UnaryElementwise

_MOVES = UnaryElementwise.ALGEBRA.commutes_with
_INCREASING = Algebra(commutes_with=_MOVES, morphisms=(("max", "max"), ("min", "min")))


def _function(name: str, onnx: str, compute, doc: str, algebra: Algebra = UnaryElementwise.ALGEBRA):
    namespace = {"__doc__": doc, "ONNX": (onnx,), "compute": staticmethod(compute), "FLOPS_PER_ELEMENT": 8,
                 "ALGEBRA": algebra}
    return type("".join(part.title() for part in name.split("_")) + "Op", (UnaryElementwise,), namespace, name=name)


TanOp = _function("tan", "Tan", np.tan, "Tangent.")
AsinOp = _function("asin", "Asin", np.arcsin, "Inverse sine, in [-pi/2, pi/2].")
AcosOp = _function("acos", "Acos", np.arccos, "Inverse cosine, in [0, pi].")
AtanOp = _function("atan", "Atan", np.arctan, "Inverse tangent, in (-pi/2, pi/2).", _INCREASING)
SinhOp = _function("sinh", "Sinh", np.sinh, "Hyperbolic sine.", _INCREASING)
CoshOp = _function("cosh", "Cosh", np.cosh, "Hyperbolic cosine.")
AsinhOp = _function("asinh", "Asinh", np.arcsinh, "Inverse hyperbolic sine.", _INCREASING)
AcoshOp = _function("acosh", "Acosh", np.arccosh, "Inverse hyperbolic cosine, for x >= 1.")
AtanhOp = _function("atanh", "Atanh", np.arctanh, "Inverse hyperbolic tangent, for |x| < 1.")
