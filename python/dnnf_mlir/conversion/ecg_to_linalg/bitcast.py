"""``ecg.bitcast`` as one element-wise ``linalg.generic`` of ``arith.bitcast`` (a bool source
zero-extended to its byte): the same bits, on the signless form arith takes."""

from ..._mlir import arith, ir
from .builders import cast, is_bool, map_values, reinterpret
from .registry import lowers


def _signless(element):
    return ir.IntegerType.get_signless(element.width) if isinstance(element, ir.IntegerType) else element


def _bitcast(value, to):
    if is_bool(value.type):
        return cast(value, to)
    bits = arith.bitcast(_signless(to), reinterpret(value, _signless(value.type)))
    return reinterpret(bits, to)


@lowers("bitcast")
def lower_bitcast(op, args):
    to = ir.RankedTensorType(op.operation.results[0].type).element_type
    return [map_values(args[0], to, lambda x: _bitcast(x, to))]
