"""Linear (de)quantization: ``quantize_linear`` and ``dequantize_linear``, one elementwise
generic each (the scale and zero point broadcast through the indexing maps), with the
arithmetic of their numpy ``reference``.

Quantizing clamps in float before converting: in f32 for types of up to 16 bits (an
integer-valued quotient and a zero point of that range add exactly, and a sum beyond
2**24 saturates either way), in f64 for int32, whose limits f32 cannot hold. NaN
becomes 0, as in the reference.
"""

from ... import _mlir
from ..._mlir import arith, ir
from .builders import cast, clamp, compare, constant, div, elementwise, int_range, is_unsigned, mul, select
from .registry import lowers


def _compute_type(element):
    """f32 for f16 (and f32), as ``quantization.compute_type``."""
    return element if element.width > 32 else ir.F32Type.get()


def _integer_range(element) -> tuple:
    if is_unsigned(element):
        return 0, (1 << element.width) - 1
    return int_range(element)


@lowers("quantize_linear")
def lower_quantize_linear(op, args):
    (spec,) = op.result_specs
    quantized = ir.RankedTensorType(op.operation.results[0].type).element_type
    wide = ir.F64Type.get() if quantized.width > 16 else ir.F32Type.get()
    low, high = _integer_range(quantized)

    def body(x, scale, zero_point):
        ctype = _compute_type(x.type)
        quotient = _mlir.math.roundeven(div(cast(x, ctype), cast(scale, ctype)))
        shifted = arith.addf(cast(quotient, wide), cast(zero_point, wide))
        saturated = clamp(shifted, constant(wide, low), constant(wide, high))
        finite = select(compare("ne", saturated, saturated), constant(wide, 0.0), saturated)
        return cast(finite, quantized)

    return [elementwise(args, spec.shape, quantized, body)]


@lowers("dequantize_linear")
def lower_dequantize_linear(op, args):
    (spec,) = op.result_specs
    result = ir.RankedTensorType(op.operation.results[0].type).element_type
    i32 = ir.IntegerType.get_signless(32)

    def body(x, scale, zero_point):
        ctype = _compute_type(scale.type)
        difference = arith.subi(cast(x, i32), cast(zero_point, i32))
        return cast(mul(cast(difference, ctype), cast(scale, ctype)), result)

    return [elementwise(args, spec.shape, result, body)]
