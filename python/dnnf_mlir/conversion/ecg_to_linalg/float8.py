"""Scalar conversions between the float8 storage types and f32, in integer bit arithmetic.

The pinned MLIR has no LLVM lowering of ``arith.extf``/``arith.truncf`` on f8E4M3FN,
f8E4M3FNUZ, f8E5M2 or f8E5M2FNUZ (LLVM has no such types; their values are i8 there),
so a conversion reads or writes the byte itself, with ml_dtypes' semantics (ONNX's
reference): round to nearest even, an overflow is NaN (infinity for E5M2), infinity
likewise (E5M2 keeps it), NaN stays NaN, and the FNUZ types have no negative zero
(their only NaN is 0x80). Saturation is the frontend's clip before the cast.
"""

from dataclasses import dataclass

from ... import _mlir
from ..._mlir import arith, ir


@dataclass(frozen=True)
class Float8Format:
    mantissa_bits: int
    bias: int
    max_code: int  # the largest finite magnitude's byte
    nan_code: int  # the byte of NaN (without its sign)
    overflow_code: int  # what a magnitude beyond max_code becomes (without its sign)
    unsigned_zero: bool  # the FNUZ types: 0x80 is NaN, -0 is +0

    @property
    def min_normal_exponent(self) -> int:
        return 1 - self.bias


FORMATS = {
    ir.Float8E4M3FNType: Float8Format(3, 7, 0x7E, 0x7F, 0x7F, False),
    ir.Float8E4M3FNUZType: Float8Format(3, 8, 0x7F, 0x80, 0x80, True),
    ir.Float8E5M2Type: Float8Format(2, 15, 0x7B, 0x7F, 0x7C, False),
    ir.Float8E5M2FNUZType: Float8Format(2, 16, 0x7F, 0x80, 0x80, True),
}


def float8_format(element):
    """The format of a float8 element type, or None for any other type."""
    return next((fmt for cls, fmt in FORMATS.items() if isinstance(element, cls)), None)


def _i32(value: int):
    i32 = ir.IntegerType.get_signless(32)
    return arith.ConstantOp(i32, ir.IntegerAttr.get(i32, value)).result


def _f32(value: float):
    f32 = ir.F32Type.get()
    return arith.ConstantOp(f32, ir.FloatAttr.get(f32, value)).result


def _eq(a, b):
    return arith.cmpi(arith.CmpIPredicate.eq, a, b)


def float8_to_f32(value):
    """The f32 of a float8 scalar: exact (every float8 value is an f32)."""
    fmt = float8_format(value.type)
    i32, f32 = ir.IntegerType.get_signless(32), ir.F32Type.get()
    code = arith.extui(i32, arith.bitcast(ir.IntegerType.get_signless(8), value))
    magnitude = arith.andi(code, _i32(0x7F))
    shift = 23 - fmt.mantissa_bits
    # A normal number: the exponent re-biased from the format's to f32's, the mantissa widened.
    normal = arith.bitcast(f32, arith.addi(arith.shli(magnitude, _i32(shift)), _i32((127 - fmt.bias) << 23)))
    # A subnormal one (exponent field 0): its mantissa times the smallest subnormal, exactly.
    smallest = 2.0 ** (fmt.min_normal_exponent - fmt.mantissa_bits)
    subnormal = arith.mulf(arith.uitofp(f32, magnitude), _f32(smallest))
    is_subnormal = arith.cmpi(arith.CmpIPredicate.ult, magnitude, _i32(1 << fmt.mantissa_bits))
    unsigned = arith.select(is_subnormal, subnormal, normal)
    sign = arith.shli(arith.andi(code, _i32(0x80)), _i32(24))
    result = arith.bitcast(f32, arith.ori(arith.bitcast(i32, unsigned), sign))
    if fmt.unsigned_zero:
        is_nan = _eq(code, _i32(0x80))
    elif fmt.overflow_code == fmt.nan_code:  # E4M3FN: S.1111.111 is NaN, there is no infinity
        is_nan = _eq(magnitude, _i32(fmt.nan_code))
    else:  # E5M2: S.11111.00 is infinity, above it NaN
        is_nan = arith.cmpi(arith.CmpIPredicate.ugt, magnitude, _i32(fmt.overflow_code))
        infinity = arith.bitcast(f32, arith.ori(_i32(0x7F800000), sign))
        result = arith.select(_eq(magnitude, _i32(fmt.overflow_code)), infinity, result)
    return arith.select(is_nan, _f32(float("nan")), result)


def f32_to_float8(value, to):
    """An f32 scalar as float8 type ``to``, rounded to nearest even (ml_dtypes' ``astype``)."""
    fmt = float8_format(to)
    i32, f32 = ir.IntegerType.get_signless(32), ir.F32Type.get()
    bits = arith.bitcast(i32, value)
    sign = arith.andi(arith.shrui(bits, _i32(24)), _i32(0x80))
    magnitude_bits = arith.andi(bits, _i32(0x7FFFFFFF))
    magnitude = arith.bitcast(f32, magnitude_bits)
    shift = 23 - fmt.mantissa_bits
    # Normal: round the dropped mantissa bits to nearest even in the integer, a carry
    # rippling into the exponent, then re-bias the exponent.
    lowest_kept = arith.andi(arith.shrui(magnitude_bits, _i32(shift)), _i32(1))
    rounded = arith.addi(magnitude_bits, arith.addi(_i32((1 << (shift - 1)) - 1), lowest_kept))
    normal = arith.subi(arith.shrui(rounded, _i32(shift)), _i32((127 - fmt.bias) << fmt.mantissa_bits))
    # Subnormal: the magnitude in units of the smallest subnormal (an exact scaling), rounded.
    units = arith.mulf(magnitude, _f32(2.0 ** (fmt.mantissa_bits - fmt.min_normal_exponent)))
    subnormal = arith.fptosi(i32, _mlir.math.roundeven(units))
    below_normal = arith.cmpf(arith.CmpFPredicate.OLT, magnitude, _f32(2.0 ** fmt.min_normal_exponent))
    code = arith.select(below_normal, subnormal, normal)
    code = arith.select(arith.cmpi(arith.CmpIPredicate.sgt, code, _i32(fmt.max_code)), _i32(fmt.overflow_code), code)
    code = arith.select(arith.cmpi(arith.CmpIPredicate.ugt, magnitude_bits, _i32(0x7F800000)), _i32(fmt.nan_code), code)
    signed = arith.ori(code, sign)
    if fmt.unsigned_zero:  # -0 is +0 (NaN, 0x80, is the same with a sign)
        signed = arith.select(_eq(code, _i32(0)), code, signed)
    return arith.bitcast(to, arith.trunci(ir.IntegerType.get_signless(8), signed))
