"""The bitwise ops (arith and/or/xor, not as xor with all ones) and the trigonometric and
hyperbolic functions (math dialect ops, which reach libm or the GPU's built-ins) as one
``linalg.generic`` each, operands broadcast the numpy way."""

from ... import _mlir
from ..._mlir import arith, ir
from .builders import constant, elementwise, map_values
from .registry import lowers

_BITWISE = {"bitwise_and": arith.andi, "bitwise_or": arith.ori, "bitwise_xor": arith.xori}
_TRIGONOMETRIC = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")


def _result_element(op):
    return ir.RankedTensorType(op.operation.results[0].type).element_type


def _on_signless(element, body):
    """``body`` on signless integers for elements of ``element`` type: arith takes no unsigned
    types, so unsigned operands and the result pass through unrealized casts (they vanish in
    the LLVM lowering; the bits are the same)."""
    if element.is_signless:
        return body
    signless = ir.IntegerType.get_signless(element.width)

    def cast(value, to):
        return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to], operands=[value]).result

    return lambda *values: cast(body(*(cast(v, signless) for v in values)), element)


@lowers(*_BITWISE)
def lower_bitwise(op, args):
    (spec,) = op.result_specs
    element = _result_element(op)
    return [elementwise(args, spec.shape, element, _on_signless(element, _BITWISE[op.mnemonic]))]


@lowers("bitwise_not")
def lower_bitwise_not(op, args):
    element = _result_element(op)
    return [map_values(args[0], element, _on_signless(element, lambda x: arith.xori(x, constant(x.type, -1))))]


@lowers(*_TRIGONOMETRIC)
def lower_trigonometric(op, args):
    function = getattr(_mlir.math, op.mnemonic)
    return [map_values(args[0], _result_element(op), function)]
