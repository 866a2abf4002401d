"""Math functions as arithmetic, so that they vectorize.

``math.erf``, ``math.tanh`` and ``math.powf`` reach LLVM as calls to libm (``erff``,
``tanhf``, ``powf``), and ``math.exp`` as ``llvm.exp``, which x86 scalarizes into
``expf`` calls: one call per element, 5-20 ns each (BERT's GELU alone spent 4 ms per
layer in ``erff``). MLIR's polynomial approximations are not exposed by the wheel, so
``approximate_math`` rewrites the f32 scalar ops (the bodies of linalg ops, before
vectorization) with the same kind of expressions:

* ``erf``: Eigen's rational approximation ``x P(x^2) / Q(x^2)`` on [-4, 4]
  (max abs error 4e-7; the quotient by a reciprocal estimate where vectorized);
* ``exp``: Cephes ``expf``: ``2^n * p(r)`` with ``r = x - n ln 2`` (~1 ulp);
* ``tanh``: ``sign(x) (1 - 2 / (exp(2|x|) + 1))``, its Taylor series below 0.125
  (rel error 1e-6);
* ``powf`` with a constant exponent of 2, 3 or 4: products; 0.5: ``sqrt``; 0.75 (the
  LRNs of AlexNet, ZFNet, GoogLeNet): ``sqrt(x) * sqrt(sqrt(x))`` (under 2 ulp; PoCL
  spent 0.3 s of ZFNet's 0.85 in its first LRN's ``powf``).
"""

from __future__ import annotations

from .. import _mlir
from .._mlir import ir

ERF_P = (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
         -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10)  # x^1, x^3, ... x^13
ERF_Q = (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03, -2.13374055278905e-04,
         -1.45660718464996e-05)  # x^0, x^2, ... x^8
EXP_P = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3, 1.9875691500e-4)
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4
LOG2E = 1.44269504088896341
EXP_MAX, EXP_MIN = 88.0, -87.3  # exp overflows / underflows beyond
# tanh near 0, where 1 - 2 / (e^2x + 1) cancels: its Taylor series x (1 - x^2/3 + 2x^4/15)
TANH_SMALL = (1.0, -1.0 / 3.0, 2.0 / 15.0)
TANH_SMALL_BELOW = 0.125


class _Builder:
    """arith ops on f32 scalars at the current insertion point."""

    def __init__(self):
        self.f32 = ir.F32Type.get()
        self.arith = _mlir.arith
        # Products feeding sums may fuse into FMAs (one rounding instead of two: the
        # polynomials get no less accurate, and half the instructions where FMA exists).
        self.contract = ir.Attribute.parse("#arith.fastmath<contract>")
        # The divisions (erf's P/Q, tanh's 2/(e+1)) have finite, nonzero divisors by
        # construction; allowing the reciprocal of finite values lets LLVM compute a
        # vector quotient as a reciprocal estimate and one Newton step (vrcp14ps or
        # vrcpps, two FMAs and a multiply: about 2^-23 relative) instead of vdivps, a
        # divider that issues one vector per several cycles where the FMA pipes take
        # two per cycle. Scalar divisions stay exact.
        self.reciprocal = ir.Attribute.parse("#arith.fastmath<ninf,contract,arcp>")

    def const(self, value: float):
        return self.arith.constant(self.f32, value)

    def add(self, a, b):
        return self.arith.addf(a, b, fastmath=self.contract)

    def sub(self, a, b):
        return self.arith.subf(a, b, fastmath=self.contract)

    def mul(self, a, b):
        return self.arith.mulf(a, b, fastmath=self.contract)

    def div(self, a, b):
        """``a / b`` for a finite, nonzero ``b`` (see ``reciprocal``)."""
        return self.arith.divf(a, b, fastmath=self.reciprocal)

    def clamp(self, x, lo: float, hi: float):
        return self.arith.maximumf(self.arith.minimumf(x, self.const(hi)), self.const(lo))

    def horner(self, x, coefficients):
        """c0 + c1 x + c2 x^2 + ..."""
        result = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            result = self.add(self.mul(result, x), self.const(c))
        return result

    def erf(self, x):
        x = self.clamp(x, -4.0, 4.0)
        x2 = self.mul(x, x)
        return self.div(self.mul(x, self.horner(x2, ERF_P)), self.horner(x2, ERF_Q))

    def exp(self, x):
        arith, i32 = self.arith, ir.IntegerType.get_signless(32)
        x = self.clamp(x, EXP_MIN, EXP_MAX)
        n = _mlir.math.floor(self.add(self.mul(x, self.const(LOG2E)), self.const(0.5)))
        r = self.sub(self.sub(x, self.mul(n, self.const(LN2_HI))), self.mul(n, self.const(LN2_LO)))
        p = self.add(self.add(self.mul(self.horner(r, EXP_P), self.mul(r, r)), r), self.const(1.0))
        biased = arith.addi(arith.fptosi(i32, n), arith.constant(i32, 127))
        scale = arith.bitcast(self.f32, arith.shli(biased, arith.constant(i32, 23)))
        return self.mul(p, scale)

    def tanh(self, x):
        magnitude = _mlir.math.absf(x)
        e = self.exp(self.mul(magnitude, self.const(2.0)))
        large = self.sub(self.const(1.0), self.div(self.const(2.0), self.add(e, self.const(1.0))))
        x2 = self.mul(x, x)
        small = self.mul(magnitude, self.horner(x2, TANH_SMALL))
        near_zero = self.arith.cmpf(self.arith.CmpFPredicate.OLT, magnitude, self.const(TANH_SMALL_BELOW))
        return _mlir.math.copysign(self.arith.select(near_zero, small, large), x)


def _constant_value(value):
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant":
        return None
    try:
        return ir.FloatAttr(owner.attributes["value"]).value
    except ValueError:
        return None


def _powf(b: _Builder, x, exponent):
    if exponent == 0.5:
        return _mlir.math.sqrt(x)
    if exponent == 0.75:
        root = _mlir.math.sqrt(x)
        return b.mul(root, _mlir.math.sqrt(root))
    if exponent in (2.0, 3.0, 4.0):
        square = b.mul(x, x)
        return {2.0: square, 3.0: b.mul(square, x), 4.0: b.mul(square, square)}[exponent]
    return None


def approximate_math(module: ir.Module) -> int:
    """Rewrite f32 scalar erf / exp / tanh / powf (constant exponent) ops as arith.
    Returns how many were rewritten."""
    found = []

    def visit(op):
        if op.name in ("math.erf", "math.exp", "math.tanh", "math.powf") and isinstance(op.results[0].type, ir.F32Type):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    b = _Builder()
    count = 0
    for op in found:
        with ir.InsertionPoint(op), op.location:
            x = op.operands[0]
            if op.name == "math.powf":
                exponent = _constant_value(op.operands[1])
                result = _powf(b, x, exponent) if exponent is not None else None
            else:
                result = getattr(b, op.name.split(".")[1])(x)
        if result is None:
            continue
        op.results[0].replace_all_uses_with(result)
        op.erase()
        count += 1
    return count


__all__ = ["approximate_math"]
